build/obj/src/util/pool.o: src/util/pool.c include/cuzk/util.h \
 include/cuzk/err.h
include/cuzk/util.h:
include/cuzk/err.h:

build/obj/src/util/alloc.o: src/util/alloc.c include/cuzk/util.h \
 include/cuzk/err.h
include/cuzk/util.h:
include/cuzk/err.h:

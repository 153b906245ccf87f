build/obj/src/util/rng.o: src/util/rng.c include/cuzk/util.h \
 include/cuzk/err.h
include/cuzk/util.h:
include/cuzk/err.h:

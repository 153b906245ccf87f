build/obj/src/util/err.o: src/util/err.c include/cuzk/err.h
include/cuzk/err.h:

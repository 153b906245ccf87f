build/obj/src/ff/fp2.o: src/ff/fp2.c include/cuzk/ff.h include/cuzk/err.h
include/cuzk/ff.h:
include/cuzk/err.h:

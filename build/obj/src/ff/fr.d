build/obj/src/ff/fr.o: src/ff/fr.c include/cuzk/ff.h include/cuzk/err.h \
 src/ff/ff_internal.h src/ff/field_impl.h
include/cuzk/ff.h:
include/cuzk/err.h:
src/ff/ff_internal.h:
src/ff/field_impl.h:

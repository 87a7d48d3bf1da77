// Karney's geodesic routines, as shipped inside PROJ (libproj-dev).
#include <geodesic.h>

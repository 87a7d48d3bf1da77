// zlib (Debian: zlib1g-dev), for reading .gz import files.
#include <zlib.h>

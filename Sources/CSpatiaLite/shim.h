// The few SpatiaLite entry points Vicinity calls, declared by hand so that this module does not pull a
// second copy of <sqlite3.h> next to GRDB's. Signatures match <spatialite.h> of libspatialite 5.
struct sqlite3;
const char *spatialite_version(void);
void *spatialite_alloc_connection(void);
void spatialite_init_ex(struct sqlite3 *db_handle, const void *ptr, int verbose);
void spatialite_cleanup_ex(const void *ptr);

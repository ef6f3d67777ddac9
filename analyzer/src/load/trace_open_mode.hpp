// How TraceFile::open opens a trace so that reading it never writes beside it, whatever lies next to the file and
// whether its directory is writable (docs/trace-format.md, "Reading a trace: readers never write").
#pragma once

#include <string>
#include <string_view>

namespace fp8scope::analyzer::detail {

// The collector writes in WAL mode (sqlite.org/wal.html): the header says so (byte 18 = 2, fileformat2.html §1.3), and
// while it writes, or after it was killed, committed rows may still be only in X-wal, indexed by X-shm. A reader must
// see those rows, and SQLite's default read-only open would create X-shm (litter in a writable directory, "unable to
// open database file" in a read-only one; wal.html "Read-Only Databases").
enum class WalState {
    None, // rollback-journal file (an nsys export): SQLite's plain read-only open creates nothing
    Closed, // WAL-mode header, no X-wal: its writer finished or checkpointed; nobody writes it
    Orphaned, // X-wal without X-shm: a crashed or copied trace; nobody writes it (below)
    Shared, // X-wal and X-shm: a live writer, or what a killed one left
};

// What lies beside `path`, from its header and the -wal and -shm names.
WalState wal_state(const std::string& path);

// The URI query that opens `state` without creating a file (sqlite.org/uri.html):
// - Closed: immutable=1. The whole content is in the file; SQLite takes no locks and opens no -wal or -shm.
// - Orphaned: the "unix-none" VFS plus PRAGMA locking_mode=EXCLUSIVE before the first read (TraceFile::open). In
//   exclusive mode SQLite keeps the WAL index in heap memory and never opens X-shm (wal.html "Use of WAL Without
//   Shared-Memory"); unix-none makes the exclusive lock a no-op, which a read-only file descriptor could not take.
//   X-wal is read and replayed: its committed frames are seen. Taking no lock is safe because no writer is live: a
//   WAL writer in SQLite's normal locking mode (the collector's) holds X-shm open for as long as it runs.
// - Shared: readonly_shm=1. SQLite opens the existing X-shm read-only and takes only read locks: with a live writer
//   it shares the writer's index; without one (a killed writer's leftovers) it finds nobody holds X-shm and rebuilds
//   the index from X-wal in heap memory (SQLITE_READONLY_CANTINIT, wal.html "Read-Only Databases").
// In every state the connection is SQLITE_OPEN_READONLY and never checkpoints on close
// (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): the trace, X-wal and X-shm are left byte for byte as they were.
std::string_view uri_query(WalState state);

// "file:" URI for `path` with `query`: every byte but unreserved ones and '/' percent-encoded, and a leading "//"
// kept from reading as an authority.
std::string file_uri(const std::string& path, std::string_view query);

} // namespace fp8scope::analyzer::detail

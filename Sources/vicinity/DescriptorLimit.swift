#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors, and how many client connections fit under it.
///
/// Every connection holds a descriptor, and so do the database's files, the event loops and the listening
/// socket. When descriptors run out, SQLite cannot open its files ("unable to open database file") and the
/// server can accept nobody, so `serve` raises the soft limit as far as the hard one allows and keeps its
/// connection cap well below it.
enum DescriptorLimit {
    /// `rlim_t.max` is RLIM_INFINITY. Where the hard limit is "unlimited", Linux still refuses more than `fs.nr_open` (1,048,576 unless changed).
    static let unlimitedStandIn = 1 << 20

    /// Raises the soft limit to the hard one and returns the limit in force afterwards.
    static func raiseSoftToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        let hard = limit.rlim_max == rlim_t.max ? rlim_t(unlimitedStandIn) : limit.rlim_max
        if limit.rlim_cur == rlim_t.max || limit.rlim_cur >= hard { return clamped(limit.rlim_cur) }
        // macOS reports an unlimited hard limit yet refuses more than OPEN_MAX (10,240) per process.
        for target in [hard, min(hard, rlim_t(openMax))] where target > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return clamped(target) }
        }
        return clamped(limit.rlim_cur)
    }

    /// Darwin's OPEN_MAX, the most a process may ask for there whatever the hard limit says.
    static let openMax = 10_240

    /// Descriptors kept back from client connections: a quarter of the limit, and at least 512 (SQLite's
    /// files for nine connections, each loop's epoll and wake-up descriptors, refusals still being answered
    /// (`ConnectionGate.lingeringRefusals`, 256), logs, and room for what a library opens without asking).
    static func reserved(under limit: Int) -> Int { max(512, limit / 4) }

    /// The most client connections that stay well under `limit`; nil when the limit leaves room for too few
    /// to be worth serving.
    static func connectionCap(under limit: Int) -> Int? {
        let cap = limit - reserved(under: limit)
        return cap >= minimumConnections ? cap : nil
    }

    /// Below this a server is a denial of service waiting for its first browser.
    static let minimumConnections = 64

    private static func clamped(_ value: rlim_t) -> Int {
        value == rlim_t.max ? unlimitedStandIn : Int(clamping: value)
    }
}

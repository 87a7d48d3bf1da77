import Metrics
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `serve --access-log` writes its lines: a file opened for appending, or standard output (`-`).
///
/// Requests never wait for the disk. A line is added to a buffer in memory, and one write at a time, on NIO's
/// thread pool (a blocking `write(2)` has no place on the event loops or Swift's cooperative threads), takes
/// whatever has gathered. Were the disk to fall so far behind that `maximumPending` bytes wait, further lines
/// are dropped and counted (`vicinity_access_log_dropped_total`) rather than held without bound.
///
/// Opened with `O_APPEND`, so a log rotated by copying and truncating (logrotate's `copytruncate`) goes on at
/// the start of the emptied file.
public final class AccessLog: Sendable {
    /// The file cannot be opened for writing.
    public struct Unwritable: Error, CustomStringConvertible {
        public var description: String
    }

    /// 8 MiB: at about 100 bytes a line, some 80,000 lines, more than two seconds of the fastest rate measured
    /// here (36,350 requests a second on `/health`, README's benchmarks) for a disk to catch up on.
    static let maximumPending = 8 * 1024 * 1024

    private struct State {
        var pending: [UInt8] = []
        var writing = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let descriptor: CInt
    private let ownsDescriptor: Bool
    private let state = Mutex(State())
    public let location: String

    /// Opens `path` for appending (created with mode 0640 when missing); `-` is standard output.
    public init(path: String) throws(Unwritable) {
        location = path == "-" ? "standard output" : path
        guard path != "-" else {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
            return
        }
        let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
        guard opened >= 0 else {
            throw Unwritable(description: "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Adds one line (its line feed included) to what the writer takes next.
    func record(_ line: String) {
        let startWriter: Bool? = state.withLock { state in
            guard state.pending.count + line.utf8.count <= Self.maximumPending else { return nil }
            state.pending.append(contentsOf: line.utf8)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        switch startWriter {
        case nil: Counter(label: "vicinity_access_log_dropped_total").increment()
        case true?: Task { await self.writeWhatIsPending() }
        case false?: break
        }
    }

    /// Returns once every line recorded before it is written: for a stop that loses none.
    public func flush() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                guard state.writing else { return true }
                state.waiting.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Writes what has gathered, batch after batch, until nothing waits; one such loop runs at a time, so lines
    /// reach the file in the order they were recorded.
    private func writeWhatIsPending() async {
        while true {
            let batch: [UInt8]? = state.withLock { state in
                guard !state.pending.isEmpty else { return nil }
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            guard let batch else {
                let waiting = state.withLock { state in
                    // Lines recorded since the batch was taken start their own loop only once this flag is off.
                    guard state.pending.isEmpty else { return [CheckedContinuation<Void, Never>]?.none }
                    state.writing = false
                    defer { state.waiting = [] }
                    return state.waiting
                }
                guard let waiting else { continue }
                for continuation in waiting { continuation.resume() }
                return
            }
            let descriptor = descriptor
            do {
                try await NIOThreadPool.singleton.runIfActive { Self.writeAll(batch, to: descriptor) }
            } catch {
                // The pool has stopped: the process is ending, and the lines go with it.
                Self.dropped(batch)
            }
        }
    }

    /// `write(2)` until every byte is out, or it fails for a reason that retrying does not cure.
    private static func writeAll(_ bytes: [UInt8], to descriptor: CInt) {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    dropped(bytes[offset...])
                    return
                }
                offset += written
            }
        }
    }

    /// Counts the lines of `bytes` as dropped.
    private static func dropped(_ bytes: some Collection<UInt8>) {
        let lines = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        Counter(label: "vicinity_access_log_dropped_total").increment(by: Int64(max(1, lines)))
    }
}

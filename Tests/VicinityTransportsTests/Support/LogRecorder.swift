import Logging
import Synchronization

/// Log records kept in memory so that tests can read what the client logged.
final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])

    /// Every record as one line: level, message and metadata.
    var lines: [String] { storage.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "vicinity.smtp.test") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let line = "\(event.level) \(event.message) \(merged.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"
            recorder.storage.withLock { $0.append(line) }
        }
    }
}

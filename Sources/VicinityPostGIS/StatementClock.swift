import Synchronization

/// When the statement under way on a leased connection was sent, if one is: the lease's watch (`leased`) takes
/// the connection for lost once a statement has waited past the configuration's `answerDeadline`.
///
/// PostgreSQL ends a statement that runs past `statement_timeout` by itself and says so; a statement that gets
/// no word at all by then has lost its server (a network that drops packets without a FIN, a peer stopped),
/// and TCP alone would take minutes (15 retransmissions by Linux's default `tcp_retries2`) to say so.
final class StatementClock: Sendable {
    /// The clock of the lease the current task works in; nil outside a watched lease.
    @TaskLocal static var current: StatementClock?

    private let sent = Mutex<ContinuousClock.Instant?>(nil)

    /// When the statement under way was sent; nil between statements.
    var since: ContinuousClock.Instant? { sent.withLock { $0 } }

    /// Runs `statement` on the current task's clock, if it has one.
    static func timing<Value>(_ statement: () async throws -> Value) async throws -> Value {
        guard let clock = current else { return try await statement() }
        clock.sent.withLock { $0 = .now }
        defer { clock.sent.withLock { $0 = nil } }
        return try await statement()
    }
}

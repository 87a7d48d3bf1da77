import Logging
import Synchronization

/// Says that the database cannot be reached once, then at most once every `interval` with how many requests
/// were answered 503 for it meanwhile, instead of a line for each: during an outage every request fails, and
/// an operator needs to know that it is going on, not a copy of it per request.
final class OutageLog: Sendable {
    /// `Problem.databaseRetrySeconds`: the pace at which the refused clients come back.
    let interval: Duration
    private let state = Mutex<(lastLine: ContinuousClock.Instant?, refused: Int)>((nil, 0))

    init(interval: Duration = .seconds(Problem.databaseRetrySeconds)) { self.interval = interval }

    /// `now`: the moment of the refusal, which tests choose.
    func refused(cause: String, logger: Logger, at now: ContinuousClock.Instant = .now) {
        let refused: Int? = state.withLock { state in
            state.refused += 1
            if let last = state.lastLine, now - last < interval { return nil }
            defer { state = (now, 0) }
            return state.refused
        }
        guard let refused else { return }
        logger.warning(
            "the database is unavailable", metadata: ["cause": "\(cause)", "requests_refused": "\(refused)"])
    }
}

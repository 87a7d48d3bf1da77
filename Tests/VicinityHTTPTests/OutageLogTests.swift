import Logging
import Testing
@testable import VicinityHTTP

@Suite("The database outage in the log")
struct OutageLogTests {
    @Test("requests refused for an unreachable database make one warning, not one each; the next says how many were refused since")
    func oneLineForMany() {
        let logs = LogRecorder()
        let outages = OutageLog(interval: .seconds(600))
        for _ in 0..<50 { outages.refused(cause: "connection refused", logger: logs.logger) }
        let warnings = logs.records.filter { $0.message == "the database is unavailable" }
        #expect(warnings.map(\.level) == [.warning])
        #expect(warnings.first?.metadata["requests_refused"] == "1")
        #expect(warnings.first?.metadata["cause"] == "connection refused")

        // Ten minutes on, the next refusal makes the next line, counting the 49 quiet ones and itself.
        outages.refused(cause: "connection refused", logger: logs.logger, at: .now + .seconds(601))
        let later = logs.records.filter { $0.message == "the database is unavailable" }
        #expect(later.map { $0.metadata["requests_refused"] } == ["1", "50"])

        let often = OutageLog(interval: .zero)
        for _ in 0..<3 { often.refused(cause: "timeout", logger: logs.logger) }
        let counts = logs.records.filter { $0.metadata["cause"] == "timeout" }.map { $0.metadata["requests_refused"] }
        #expect(counts == ["1", "1", "1"], "with no interval, every refusal is a line of its own")
    }
}

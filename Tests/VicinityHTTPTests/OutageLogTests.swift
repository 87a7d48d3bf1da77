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

        let often = OutageLog(interval: .zero)
        for _ in 0..<3 { often.refused(cause: "timeout", logger: logs.logger) }
        let counts = logs.records.filter { $0.metadata["cause"] == "timeout" }.map { $0.metadata["requests_refused"] }
        #expect(counts == ["1", "1", "1"], "each line counts the refusals since the one before")
    }
}

import Hummingbird
import Testing

/// Runs the application that `build` makes on a free port for `body`, and stops it after. `build` is handed the
/// callback to give the application as its `onListening`, which says the port it was given.
func withListening<App: ApplicationProtocol>(
    _ build: (_ onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void) async throws -> App,
    _ body: @Sendable (_ port: Int) async throws -> Void
) async throws {
    let (ports, announce) = AsyncStream<Int>.makeStream()
    let app = try await build { _, port in announce.yield(port) }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            // A service that stops before it listens (a port it cannot bind) ends the wait for its port.
            defer { announce.finish() }
            try await app.runService(gracefulShutdownSignals: [])
        }
        var listening = ports.makeAsyncIterator()
        let port = try #require(await listening.next())
        do { try await body(port) } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

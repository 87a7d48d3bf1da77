import AsyncAlgorithms
import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import ServiceLifecycle
import VicinityCore

/// `GET /v1/events`: the caller's events as Server-Sent Events (text/event-stream).
///
/// Each event is written with its number (`id:`), its type (`event:`) and its JSON (`data:`). A client that
/// reconnects with `Last-Event-ID` first gets what it missed within the retention window. A comment line every
/// `HTTPOptions.eventHeartbeat` keeps proxies and the client from taking a quiet stream for a dead one, and
/// shows the server a client that has gone. Graceful shutdown ends each stream cleanly, and the client
/// reconnects with its last id to whichever server answers next.
struct EventRoutes<S: Stores>: RouteGroup {
    let events: EventService<S>
    let options: HTTPOptions

    static var mediaType: String { "text/event-stream" }

    func register(in table: inout RouteTable) {
        table.add(.get, "/v1/events", .signedIn) { request, context in try await stream(request, context: context) }
    }

    func stream(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let lastEventID = try Self.lastEventID(request)
        let identity = try context.signedIn()
        let events = events
        let heartbeat = options.eventHeartbeat
        let logger = context.logger
        let headers: HTTPFields = [
            .contentType: Self.mediaType,
            .cacheControl: "no-cache",
            // nginx would otherwise buffer the stream and deliver events late.
            .accelBuffering: "no",
        ]
        // HEAD sends no body: it opens nothing, and takes no lease.
        if request.method == .head { return Response(status: .ok, headers: headers) }
        // The lease is taken, and the hub subscribed, before the answer starts: a store that cannot count the
        // stream answers 503 rather than a stream that ends at once.
        let opened = try await events.openStream(for: identity, after: lastEventID, renewedEvery: heartbeat)
        let lease = opened.lease
        let deliveries = opened.deliveries
        let body = ResponseBody { writer in
            let open = Meter(label: "vicinity_event_streams_open")
            open.increment()
            defer { open.decrement() }
            // Items wait in a channel with no buffer: the event stream is read, and its replay pages fetched,
            // only as fast as the client takes what is written; events recorded meanwhile wait in the hub's
            // bounded buffer, and a client that falls further behind loses the stream and replays on reconnect.
            let items = AsyncChannel<Item>()
            let forward = Task {
                do {
                    for try await delivery in deliveries { await items.send(.delivery(delivery)) }
                } catch is CancellationError {
                } catch {
                    // The client reconnects with its last id; the cause stays in the log.
                    logger.error("Event stream ended by a store error", metadata: ["error": "\(error)"])
                }
                items.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: heartbeat) } catch { break }
                    // Sign-outs and pushed-out leases in this process end the stream at once (EventHub); an
                    // expiry, a sign-out or a newer stream through another server, at the next beat. A store
                    // that does not answer ends nothing: the lease outlasts two missed beats.
                    if (try? await events.keepStream(lease, of: identity, renewedEvery: heartbeat)) == false {
                        items.finish()
                        break
                    }
                    await items.send(.heartbeat)
                }
            }
            let written: Result<Void, any Error>
            do {
                try await withGracefulShutdownHandler {
                    try await writer.write(ByteBuffer(string: "retry: 3000\n: connected\n\n"))
                    for await item in items { try await writer.write(item.buffer) }
                } onGracefulShutdown: {
                    items.finish()
                }
                written = .success(())
            } catch {
                written = .failure(error)
            }
            forward.cancel()
            beat.cancel()
            // Given back however the stream ended; a lease that could not be given back stops counting when
            // it expires.
            try? await events.closeLease(lease)
            try written.get()
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The `Last-Event-ID` a reconnecting client sends; nil for a first connection.
    static func lastEventID(_ request: Request) throws(APIError) -> EventID? {
        guard let text = request.headers[.lastEventID] else { return nil }
        guard let id = EventID(HTTPText.trimmed(text)) else { throw .invalidLastEventID }
        return id
    }

    enum Item: Sendable {
        case delivery(Delivery)
        case heartbeat

        /// The type of the notice of a friend's move, which is not recorded.
        static var friendMoved: String { "friend_moved" }

        /// The event in SSE framing; its JSON is one line, so one `data:` field carries it. A notice has no
        /// `id:`, so that a client's `Last-Event-ID` stays the last recorded event's.
        var buffer: ByteBuffer {
            switch self {
            case .delivery(.event(let event)):
                var bytes = Array("id: \(event.id)\nevent: \(event.type.rawValue)\ndata: ".utf8)
                Wire.event(event).write(to: &bytes)
                bytes += "\n\n".utf8
                return ByteBuffer(bytes: bytes)
            case .delivery(.friendMoved(let view)):
                var bytes = Array("event: \(Self.friendMoved)\ndata: ".utf8)
                JSONValue.object(Wire.friend(view)).write(to: &bytes)
                bytes += "\n\n".utf8
                return ByteBuffer(bytes: bytes)
            case .heartbeat:
                return ByteBuffer(string: ": heartbeat\n\n")
            }
        }
    }
}

extension HTTPField.Name {
    /// Sent by an SSE client that reconnects (WHATWG HTML, server-sent events).
    static var lastEventID: Self { Self("Last-Event-ID")! }
    /// nginx's switch for buffering a proxied response.
    static var accelBuffering: Self { Self("X-Accel-Buffering")! }
}

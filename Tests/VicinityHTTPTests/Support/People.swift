import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// Someone signed up and signed in through the API.
struct Person: Sendable {
    var id: String
    var username: String
    var token: String
}

/// The password every test person signs up with.
let testPassword = "correct horse battery"

extension TestClientProtocol {
    /// A request with an optional bearer token and JSON body.
    func call(
        _ method: HTTPRequest.Method, _ uri: String, as person: Person? = nil, json: String? = nil, headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if let person { headers[.authorization] = "Bearer \(person.token)" }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    /// Signs a new person up and in; the test fails if either step does.
    func person(_ username: String, first: String? = nil, last: String = "Test") async throws -> Person {
        let firstName = first ?? username.capitalized
        let signUp = try await call(.post, "/v1/users", json: """
            {"username":"\(username)","password":"\(testPassword)","first_name":"\(firstName)","last_name":"\(last)"}
            """)
        #expect(signUp.status == .created, "\(signUp.text)")
        let id = try #require(signUp.object?["id"] as? String)
        let signIn = try await call(.post, "/v1/sessions", json: #"{"username":"\#(username)","password":"\#(testPassword)"}"#)
        #expect(signIn.status == .created, "\(signIn.text)")
        let token = try #require(signIn.object?["token"] as? String)
        return Person(id: id, username: username, token: token)
    }

    /// Makes two people friends through a request and its acceptance.
    func befriend(_ a: Person, _ b: Person) async throws {
        let request = try await call(.post, "/v1/friend-requests", as: a, json: #"{"to":"\#(b.id)"}"#)
        #expect(request.status == .created, "\(request.text)")
        let id = try #require(request.object?["id"] as? String)
        let accepted = try await call(.post, "/v1/friend-requests/\(id)/accept", as: b)
        #expect(accepted.status == .ok, "\(accepted.text)")
    }

    /// Shares a position; the test fails unless it is accepted.
    func share(_ person: Person, _ latitude: Double, _ longitude: Double, status: String? = nil) async throws {
        let statusMember = status.map { #","status":"\#($0)""# } ?? ""
        let response = try await call(.put, "/v1/me/position", as: person, json: #"{"lat":\#(latitude),"lon":\#(longitude)\#(statusMember)}"#)
        #expect(response.status == .ok, "\(response.text)")
    }
}

extension TestResponse {
    /// The body as a JSON array under `key`, each element an object.
    func list(_ key: String) -> [[String: Any]] { (object?[key] as? [[String: Any]]) ?? [] }
}

/// One item of a Server-Sent Events stream as a client parses it.
enum StreamItem: Equatable, Sendable {
    case event(id: String, type: String, data: String)
    case comment(String)
}

/// An HTTP/1.1 client for `GET /v1/events` over a real socket, since the router test client waits for a body's
/// end, which an event stream never reaches. The response head is read first; then `items` yields each event
/// and comment as it arrives, and ends when the server ends the stream.
struct EventStreamConnection: Sendable {
    let status: HTTPResponseStatus
    let headers: HTTPHeaders
    let items: AsyncStream<StreamItem>
    let reader: Task<Void, Never>

    static func open(port: Int, token: String, lastEventID: String? = nil) async throws -> EventStreamConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/events")
        head.headers.add(name: "Host", value: "127.0.0.1")
        head.headers.add(name: "Authorization", value: "Bearer \(token)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { head.headers.add(name: "Last-Event-ID", value: lastEventID) }

        let (items, feed) = AsyncStream<StreamItem>.makeStream()
        let (heads, headFeed) = AsyncStream<HTTPResponseHead>.makeStream()
        let reader = Task {
            do {
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(.head(head))
                    try await outbound.write(.end(nil))
                    var parser = EventStreamParser()
                    for try await part in inbound {
                        switch part {
                        case .head(let responseHead):
                            headFeed.yield(responseHead)
                            headFeed.finish()
                        case .body(let buffer):
                            for item in parser.feed(String(buffer: buffer)) { feed.yield(item) }
                        case .end:
                            feed.finish()
                            return
                        }
                    }
                }
            } catch {}
            headFeed.finish()
            feed.finish()
        }
        var headIterator = heads.makeAsyncIterator()
        guard let responseHead = await headIterator.next() else { throw ChannelError.eof }
        return EventStreamConnection(status: responseHead.status, headers: responseHead.headers, items: items, reader: reader)
    }

    /// Closes the connection from the client's side.
    func close() { reader.cancel() }
}

/// Splits SSE text into events and comments (WHATWG HTML, "Server-sent events": lines, blank line ends an event).
struct EventStreamParser {
    private var pending = ""
    private var fields: [String: String] = [:]

    mutating func feed(_ text: String) -> [StreamItem] {
        pending += text
        var items: [StreamItem] = []
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending = String(pending[pending.index(after: newline)...])
            if line.isEmpty {
                if let data = fields["data"] {
                    items.append(.event(id: fields["id"] ?? "", type: fields["event"] ?? "message", data: data))
                }
                fields = [:]
            } else if line.hasPrefix(":") {
                items.append(.comment(String(line.dropFirst()).trimmingCharacters(in: .whitespaces)))
            } else {
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let value = parts.count > 1 ? String(parts[1].drop { $0 == " " }) : ""
                fields[String(parts[0])] = value
            }
        }
        return items
    }
}

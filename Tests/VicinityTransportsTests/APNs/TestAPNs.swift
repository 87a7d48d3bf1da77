import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Synchronization
import TLSTestSupport
import VicinityCore

/// An APNs on loopback for one test: a Hummingbird server that speaks HTTP/2 only, over TLS with a certificate
/// from a throwaway authority the client is told to trust. It checks every request as APNs would (the path, the
/// provider token's ES256 signature against the key's public half and its `kid`, `iss` and `alg`, the headers,
/// the JSON payload), writes down what it got, and answers as the test tells it.
final class TestAPNs: Sendable {
    /// How it answers one request.
    enum Answer: Sendable {
        /// 200 with an `apns-id` when every check holds, else 400 `{"reason":"TestChecksFailed"}`.
        case accept
        /// This status with `{"reason": reason}` and these header fields, as APNs refuses.
        case refuse(Int, reason: String, headers: [String: String] = [:])
    }

    /// What it made of one request.
    struct Received: Sendable {
        var path: String
        var deviceToken: String
        /// Every header field, names in lower case.
        var headers: [String: String]
        /// The provider token as sent, and what its header and claims said.
        var jwt: String?
        var jwtHeader: [String: String]
        var issuer: String?
        var issuedAt: Int64?
        var payload: [UInt8]
        /// What APNs would have refused; empty when all holds.
        var problems: [String]

        /// The payload as a JSON object, for a test to look into.
        func payloadObject() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
                throw Failure(description: "the payload is not a JSON object")
            }
            return object
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What a real APNs knows of the service: the key it registered, under which ID and team.
    struct Account: Sendable {
        var publicKey: [UInt8]
        var keyID: String
        var teamID: String
    }

    private struct State {
        var answers: [Answer]
        var received: [Received] = []
    }

    let account: Account
    private let state: Mutex<State>

    private init(account: Account, answers: [Answer]) {
        self.account = account
        self.state = Mutex(State(answers: answers))
    }

    /// Every request taken, in the order they came.
    var received: [Received] { state.withLock { $0.received } }

    /// Answers the requests still to come with `answers`, in order, and `.accept` after them.
    func answer(_ answers: [Answer]) {
        state.withLock { $0.answers = answers }
    }

    /// Runs an APNs for `account` on a free port of 127.0.0.1 for `body`, and stops it after.
    static func run<Value: Sendable>(
        account: Account, answers: [Answer] = [], _ body: @Sendable (TestAPNs, _ port: Int, _ authority: TestAuthority) async throws -> Value
    ) async throws -> Value {
        let authority = try await TestAuthority.make(name: "test APNs root")
        let issued = try await authority.issue(commonName: "test APNs")
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(issued.certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: issued.keyFile, format: .pem)))
        // HTTP/2 alone, as APNs: a client that cannot speak it gets no answer.
        tls.applicationProtocols = ["h2"]

        let apns = TestAPNs(account: account, answers: answers)
        let router = Router()
        router.post("/3/device/:token") { request, context in
            let body = try await request.body.collect(upTo: 1 << 20)
            return apns.respond(to: request, token: context.parameters.get("token") ?? "", body: Array(buffer: body))
        }
        let (listening, announce) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "vicinity.test-apns")
        // Cancelling the server, as each test ends, is logged as an error; nothing else it says matters here.
        logger.logLevel = .critical
        let app = Application(
            router: router, server: try .tls(.plaintextHTTP2(), tlsConfiguration: tls),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                if let port = channel.localAddress?.port { announce.yield(port) }
            },
            logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var ports = listening.makeAsyncIterator()
            guard let port = await ports.next() else { throw Failure(description: "the test APNs did not start") }
            do {
                let value = try await body(apns, port, authority)
                group.cancelAll()
                return value
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    /// Checks one request, writes it down and answers it.
    private func respond(to request: Request, token: String, body: [UInt8]) -> Response {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        var received = Received(
            path: request.uri.path, deviceToken: token, headers: headers, jwtHeader: [:], payload: body, problems: [])
        check(&received)
        let answer = state.withLock { state in
            state.received.append(received)
            return state.answers.isEmpty ? Answer.accept : state.answers.removeFirst()
        }
        switch answer {
        case .accept where received.problems.isEmpty:
            var fields = HTTPFields()
            fields[HTTPField.Name("apns-id")!] = headers["apns-id"] ?? UUID().uuidString.lowercased()
            return Response(status: .ok, headers: fields)
        case .accept:
            return Self.refusal(400, reason: "TestChecksFailed", headers: [:])
        case .refuse(let status, let reason, let extra):
            return Self.refusal(status, reason: reason, headers: extra)
        }
    }

    private static func refusal(_ status: Int, reason: String, headers: [String: String]) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"reason":"\#(reason)"}"#)))
    }

    /// What APNs checks (Apple, "Sending notification requests to APNs" and "Establishing a token-based
    /// connection to APNs"), each failure in words.
    private func check(_ received: inout Received) {
        var problems: [String] = []
        let token = received.deviceToken
        let lowerHex = Set("0123456789abcdef".utf8)
        if token.isEmpty || !token.utf8.allSatisfy(lowerHex.contains) { problems.append("the device token is not lower-case hex") }
        let headers = received.headers
        if headers["apns-push-type"] != "alert" { problems.append("apns-push-type is \(headers["apns-push-type"] ?? "missing")") }
        if headers["apns-topic"]?.isEmpty ?? true { problems.append("no apns-topic") }
        if headers["apns-priority"] != "10" { problems.append("apns-priority is \(headers["apns-priority"] ?? "missing")") }
        if let expiration = headers["apns-expiration"] {
            if Int64(expiration) == nil { problems.append("apns-expiration is not a number") }
        } else {
            problems.append("no apns-expiration")
        }
        if let collapseID = headers["apns-collapse-id"], collapseID.utf8.count > 64 { problems.append("apns-collapse-id is over 64 bytes") }
        if let id = headers["apns-id"], UUID(uuidString: id) == nil { problems.append("apns-id is not a UUID") }
        if received.payload.count > 4096 { problems.append("the payload is over 4096 bytes") }
        let object = (try? JSONSerialization.jsonObject(with: Data(received.payload))) as? [String: Any]
        if object?["aps"] == nil {
            problems.append("the payload is not a JSON object with aps")
        }
        problems += checkProviderToken(headers["authorization"], into: &received)
        received.problems = problems
    }

    /// The provider token: `bearer` and an ES256 JWT that verifies with the account's key, for its key and team.
    private func checkProviderToken(_ authorization: String?, into received: inout Received) -> [String] {
        guard let authorization, authorization.hasPrefix("bearer ") else { return ["no bearer authorization"] }
        let jwt = String(authorization.dropFirst("bearer ".count))
        received.jwt = jwt
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let claims = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { return ["the provider token is not three base64url parts"] }
        var problems: [String] = []
        received.jwtHeader = (try? JSONSerialization.jsonObject(with: Data(header)) as? [String: String]) ?? [:]
        if received.jwtHeader != ["alg": "ES256", "kid": account.keyID] { problems.append("the token's header is \(received.jwtHeader)") }
        struct Claims: Decodable {
            var iss: String
            var iat: Int64
        }
        if let decoded = try? JSONDecoder().decode(Claims.self, from: Data(claims)) {
            received.issuer = decoded.iss
            received.issuedAt = decoded.iat
            if decoded.iss != account.teamID { problems.append("the token's iss is \(decoded.iss)") }
        } else {
            problems.append("the token's claims are not iss and iat")
        }
        let verified: Bool
        do {
            let key = try P256.Signing.PublicKey(x963Representation: account.publicKey)
            verified = key.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Array((parts[0] + "." + parts[1]).utf8))
        } catch {
            verified = false
        }
        if !verified { problems.append("the token's signature does not verify with the key") }
        return problems
    }
}

import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Sends one message to one browser through its push service (RFC 8030 §5): encrypted for the browser alone
/// (RFC 8291), signed for the push service with the server's VAPID key (RFC 8292), posted with how long to keep
/// it, how urgent it is and what it replaces. What the push service answers becomes a `WebPushOutcome`; nothing
/// is thrown, as the outbox acts on every failure.
///
/// A push is taken once the push service answers 2xx; a timeout after the body went out can still mean it was
/// taken, and the retry sends it again (delivery is at least once; a `Topic` makes the second replace the first).
public struct WebPushClient: Sendable {
    public let configuration: WebPushConfiguration
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let logger: Logger
    /// Shared by every copy of this client.
    private let tokens = VAPIDTokenCache()

    /// The start of a refusal's body kept for the words of the outcome: push services put their reason there.
    static let detailLength = 200

    /// - Parameters:
    ///   - httpClient: shared by every push; best made with `WebPushConfiguration.httpClientConfiguration`.
    ///   - now: the clock the token's expiry and a `Retry-After` date are read against.
    public init(
        configuration: WebPushConfiguration, httpClient: HTTPClient = .shared, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "vicinity.webpush")
    ) {
        self.configuration = configuration
        self.http = httpClient
        self.now = now
        self.logger = logger
    }

    /// Sends `message` (at most `WebPushEncryption.maximumPlaintextLength` octets) to `subscription`.
    public func send(_ message: [UInt8], to subscription: WebPushSubscription, options: WebPushOptions) async -> WebPushOutcome {
        var logger = self.logger
        // The origin, never the endpoint: the endpoint is what lets anyone push to the browser.
        logger[metadataKey: "push.service"] = "\(subscription.origin)"
        let outcome = await deliver(message, to: subscription, options: options)
        switch outcome {
        case .delivered: logger.debug("push delivered")
        case .retry(_, let reason), .gone(let reason): logger.info("push not delivered", metadata: ["push.reason": "\(reason)"])
        case .failed(let reason), .misconfigured(let reason): logger.warning("push refused", metadata: ["push.reason": "\(reason)"])
        }
        return outcome
    }

    private func deliver(_ message: [UInt8], to subscription: WebPushSubscription, options: WebPushOptions) async -> WebPushOutcome {
        guard subscription.isHTTPS || configuration.allowHTTP else {
            return .failed(reason: "the push endpoint at \(subscription.origin) is not https, and plain http is not allowed (serve --push-allow-http)")
        }
        let body: [UInt8]
        do throws(WebPushProblem) {
            body = try WebPushEncryption.encrypt(message, for: subscription)
        } catch {
            return .failed(reason: error.description)
        }
        let authorization: String
        do throws(WebPushProblem) {
            authorization = try tokens.authorization(
                audience: subscription.origin, subject: configuration.subject, key: configuration.key, now: now())
        } catch {
            return .misconfigured(reason: error.description)
        }

        var request = HTTPClientRequest(url: subscription.endpoint.absoluteString)
        request.method = .POST
        // RFC 8030 §5.2–§5.4, RFC 8291 §4 (one content coding, aes128gcm), RFC 8292 §3.
        request.headers.add(name: "TTL", value: String(options.timeToLiveSeconds))
        request.headers.add(name: "Urgency", value: options.urgency.rawValue)
        if let topic = options.topic { request.headers.add(name: "Topic", value: topic.rawValue) }
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Authorization", value: authorization)
        request.body = .bytes(ByteBuffer(bytes: body))

        do {
            let response = try await http.execute(request, timeout: TimeAmount(configuration.requestTimeout), logger: logger)
            let status = Int(response.status.code)
            // Read also when taken, so that the connection is left clean for the next push.
            let detail = ResponseText.printable(await ResponseText.prefix(of: response.body, limit: Self.detailLength))
            return WebPushOutcome.answer(
                status: status, retryAfter: response.headers.first(name: "Retry-After"), detail: detail, now: now())
        } catch {
            return .retry(after: nil, reason: "the push service at \(subscription.origin) could not be reached: \(error)")
        }
    }
}

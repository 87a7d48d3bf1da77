import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Sends one alert to one app on one device through APNs (Apple, "Sending notification requests to APNs"): a
/// POST to `/3/device/<token>` over HTTP/2, authorized by a provider token signed with the service's key, with
/// the JSON payload and headers that say what kind of push it is, for which app, how long to keep it and which
/// alert it replaces. What APNs answers becomes an `APNsOutcome`; nothing is thrown, as the outbox acts on every
/// failure.
///
/// A notification is taken once APNs answers 200; a timeout after the body went out can still mean it was taken,
/// and the retry sends it again. Given the message's `id` as `apns-id`, both tries are one notification to APNs's
/// records, and a collapse ID makes the second replace the first on the device.
public struct APNsClient: Sendable {
    public let configuration: APNsConfiguration
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let logger: Logger
    /// Shared by every copy of this client, so that all its sends use one token (Apple asks for one at a time).
    private let providerToken: APNsProviderToken

    /// The start of an answer's body kept to read its reason from: APNs's bodies are a short JSON object.
    static let bodyLength = 1024

    /// - Parameters:
    ///   - httpClient: shared by every send, so that they share connections; best made with
    ///     `APNsConfiguration.httpClientConfiguration`.
    ///   - now: the clock the provider token's age and a `Retry-After` date are read against.
    public init(
        configuration: APNsConfiguration, httpClient: HTTPClient = .shared, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "vicinity.apns")
    ) {
        self.configuration = configuration
        self.http = httpClient
        self.now = now
        self.logger = logger
        self.providerToken = APNsProviderToken(key: configuration.key, keyID: configuration.keyID, teamID: configuration.teamID)
    }

    /// Sends `notification` to the app `topic` on the device of `token`.
    ///
    /// - Parameter id: the outbox message's identifier, sent as `apns-id` on every try of it; APNs makes one
    ///   up when there is none.
    public func send(_ notification: APNsNotification, to token: APNsDeviceToken, topic: APNsTopic, id: UUID? = nil) async -> APNsOutcome {
        var logger = self.logger
        // The topic and the message, never the device token: it is all anyone needs to push to the device.
        logger[metadataKey: "apns.topic"] = "\(topic.rawValue)"
        if let id { logger[metadataKey: "apns.id"] = "\(id.uuidString.lowercased())" }
        let (outcome, bearer) = await deliver(notification, to: token, topic: topic, id: id, logger: logger)
        let said = outcome.withholding([token.hex, bearer ?? ""])
        switch said {
        case .delivered: logger.debug("notification delivered")
        case .retry(_, let reason), .gone(let reason): logger.info("notification not delivered", metadata: ["apns.reason": "\(reason)"])
        case .failed(let reason), .misconfigured(let reason): logger.warning("notification refused", metadata: ["apns.reason": "\(reason)"])
        }
        return said
    }

    /// The outcome, and the provider token sent, for `send` to withhold from its words.
    private func deliver(
        _ notification: APNsNotification, to token: APNsDeviceToken, topic: APNsTopic, id: UUID?, logger: Logger
    ) async -> (APNsOutcome, String?) {
        let body: [UInt8]
        do throws(APNsProblem) {
            body = try APNsPayload.body(for: notification)
        } catch {
            return (.failed(reason: error.description), nil)
        }
        let bearer: String
        do throws(APNsProblem) {
            bearer = try providerToken.token(now: now())
        } catch {
            return (.misconfigured(reason: error.description), nil)
        }

        var request = HTTPClientRequest(url: configuration.server.appendingPathComponent("3/device/\(token.hex)").absoluteString)
        request.method = .POST
        // Apple, "Sending notification requests to APNs": the headers of an alert.
        request.headers.add(name: "authorization", value: "bearer \(bearer)")
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-topic", value: topic.rawValue)
        request.headers.add(name: "apns-expiration", value: notification.expirationHeader)
        // 10: deliver at once; an alert the user is to see, which is what 10 is for (5 and 1 save the battery).
        request.headers.add(name: "apns-priority", value: "10")
        if let collapseID = notification.collapseIDHeader { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        // Apple writes apns-id in lower case, as a UUID's canonical text is (RFC 9562 §4).
        if let id { request.headers.add(name: "apns-id", value: id.uuidString.lowercased()) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))

        do {
            let response = try await http.execute(request, timeout: TimeAmount(configuration.requestTimeout), logger: logger)
            let status = Int(response.status.code)
            // Read also when taken, so that the stream is finished cleanly.
            let reason = APNsOutcome.reason(ofBody: await ResponseText.prefix(of: response.body, limit: Self.bodyLength))
            if status == 403, let reason, APNsOutcome.providerTokenReasons.contains(reason) {
                providerToken.discard(bearer)
            }
            let outcome = APNsOutcome.answer(
                status: status, reason: reason, retryAfter: response.headers.first(name: "retry-after"),
                apnsID: response.headers.first(name: "apns-id"), now: now())
            return (outcome, bearer)
        } catch {
            return (.retry(after: nil, reason: "APNs at \(configuration.server.host ?? "?") could not be reached: \(error)"), bearer)
        }
    }
}

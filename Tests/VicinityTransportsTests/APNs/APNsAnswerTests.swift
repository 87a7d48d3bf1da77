import Foundation
import Testing
import VicinityCore
@testable import VicinityTransports

/// How APNs's answers become what the outbox does, without a network: Apple's table of statuses and reasons
/// ("Handling notification responses from APNs"), the reason read from the body, and secrets kept out of words.
@Suite("APNs's answers and what the outbox makes of them")
struct APNsAnswerTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date

    func answer(_ status: Int, _ reason: String? = nil, retryAfter: String? = nil, apnsID: String? = nil) -> APNsOutcome {
        APNsOutcome.answer(status: status, reason: reason, retryAfter: retryAfter, apnsID: apnsID, now: Self.now)
    }

    @Test("200 is delivered under its apns-id; 410 and a device token APNs calls bad or not the topic's are gone")
    func deliveredAndGone() {
        #expect(answer(200, apnsID: "b2b8d8b1-5ae4-4c66-9d5d-4d1c5e1cbb2f") == .delivered(apnsID: "b2b8d8b1-5ae4-4c66-9d5d-4d1c5e1cbb2f"))
        #expect(answer(200).deliveryOutcome == .delivered)
        for (status, reason) in [(410, "Unregistered"), (410, "ExpiredToken"), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic")] {
            #expect(answer(status, reason) == .gone(reason: "device token no longer valid for this app (APNs answered \(status) \(reason))"))
        }
        #expect(answer(410, "Unregistered").deliveryOutcome == .gone(reason: "device token no longer valid for this app (APNs answered 410 Unregistered)"))
    }

    @Test("every 403, a missing topic and a server that is not APNs are misconfigurations; a topic the key may not push to removes the device; other 400s and 413 fail; 429, 5xx and IdleTimeout are retried")
    func misconfiguredFailedRetried() {
        for reason in ["InvalidProviderToken", "ExpiredProviderToken", "MissingProviderToken", "BadCertificateEnvironment", "Forbidden"] {
            guard case .misconfigured(let words) = answer(403, reason) else {
                Issue.record("403 \(reason) is not a misconfiguration")
                continue
            }
            #expect(words.hasSuffix("(APNs answered 403 \(reason))"))
        }
        for reason in ["BadTopic", "TopicDisallowed"] {
            #expect(answer(400, reason) == .gone(reason: "the device's app is not one this key pushes to (APNs answered 400 \(reason))"))
        }
        #expect(answer(400, "MissingTopic") == .misconfigured(reason: "APNs found no topic in the request (APNs answered 400 MissingTopic)"))
        #expect(answer(404, "BadPath") == .misconfigured(reason: "the server is not APNs or not at the configured address (APNs answered 404 BadPath)"))
        #expect(answer(405, "MethodNotAllowed").deliveryOutcome == .misconfigured(
            reason: "the server is not APNs or not at the configured address (APNs answered 405 MethodNotAllowed)"))

        #expect(answer(413, "PayloadTooLarge") == .failed(reason: "APNs refused the notification as too large (APNs answered 413 PayloadTooLarge)"))
        #expect(answer(400, "BadExpirationDate") == .failed(reason: "APNs refused the request as malformed (APNs answered 400 BadExpirationDate)"))
        #expect(answer(400) == .failed(reason: "APNs refused the request as malformed (APNs answered 400)"))
        #expect(answer(418) == .failed(reason: "APNs answered 418"))

        #expect(answer(429, "TooManyProviderTokenUpdates", retryAfter: "1200") == .retry(after: .seconds(1200), reason: "APNs answered 429 TooManyProviderTokenUpdates"))
        #expect(answer(503, "ServiceUnavailable", retryAfter: "Sun, 06 Nov 1994 08:51:37 GMT") == .retry(after: .seconds(120), reason: "APNs answered 503 ServiceUnavailable"))
        #expect(answer(500, "InternalServerError", retryAfter: "soon") == .retry(after: nil, reason: "APNs answered 500 InternalServerError"))
        #expect(answer(503, "Shutdown") == .retry(after: nil, reason: "APNs answered 503 Shutdown"))
        #expect(answer(400, "IdleTimeout") == .retry(after: nil, reason: "APNs answered 400 IdleTimeout"))
    }

    @Test("the reason is the JSON body's reason on one printable line; a body that is not such JSON gives none")
    func reasonOfBody() {
        #expect(APNsOutcome.reason(ofBody: Array(#"{"reason":"Unregistered","timestamp":1800000000000}"#.utf8)) == "Unregistered")
        #expect(APNsOutcome.reason(ofBody: Array(#"{"reason":"Bad\nTopic"}"#.utf8)) == "Bad Topic")
        #expect(APNsOutcome.reason(ofBody: Array("<html>Bad Gateway</html>".utf8)) == nil)
        #expect(APNsOutcome.reason(ofBody: []) == nil)
        #expect(APNsOutcome.reason(ofBody: Array(#"{"reason":""}"#.utf8)) == nil)
        let long = String(repeating: "A", count: 500)
        #expect(APNsOutcome.reason(ofBody: Array(#"{"reason":"\#(long)"}"#.utf8))?.count == APNsOutcome.reasonLength)
    }

    @Test("an outcome's words are cleared of the device token and the provider token, whatever named them")
    func withholding() {
        let token = String(repeating: "ab", count: 32)
        let outcome = APNsOutcome.retry(after: .seconds(3), reason: "GET /3/device/\(token) failed with bearer eyJ.x.y")
        #expect(outcome.withholding([token, "eyJ.x.y"]) == .retry(after: .seconds(3), reason: "GET /3/device/<withheld> failed with bearer <withheld>"))
        #expect(APNsOutcome.gone(reason: token).withholding([token, ""]) == .gone(reason: "<withheld>"))
        #expect(APNsOutcome.delivered(apnsID: "x").withholding([token]) == .delivered(apnsID: "x"))
    }
}

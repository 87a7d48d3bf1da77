import Foundation
import Testing
import VicinityCore
@testable import VicinityTransports

/// How a push service's answer becomes what the outbox does, without a network: every status class, and
/// `Retry-After` in both its forms.
@Suite("A push service's answers and what the outbox makes of them")
struct WebPushAnswerTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date

    func answer(_ status: Int, retryAfter: String? = nil) -> WebPushOutcome {
        WebPushOutcome.answer(status: status, retryAfter: retryAfter, detail: "", now: Self.now)
    }

    @Test("201, 202 and 200 are delivered; 404 and 410 mean the subscription is gone, and the outbox removes its device")
    func deliveredAndGone() {
        for status in [201, 202, 200] { #expect(answer(status) == .delivered) }
        for status in [404, 410] {
            guard case .gone(let reason) = answer(status) else {
                Issue.record("\(status) is not gone")
                continue
            }
            #expect(reason.hasPrefix("subscription gone"))
            #expect(answer(status).deliveryOutcome == .gone(reason: reason))
        }
    }

    @Test("429, 408 and 5xx are retried, after the Retry-After when given; 401 is a VAPID misconfiguration, 403 a subscription made with another key; 400, 413 and other answers fail")
    func retriedRefusedFailed() {
        #expect(answer(429, retryAfter: "7") == .retry(after: .seconds(7), reason: "the push service answered 429"))
        #expect(answer(503) == .retry(after: nil, reason: "the push service answered 503"))
        #expect(answer(500, retryAfter: "soon") == .retry(after: nil, reason: "the push service answered 500"))
        #expect(answer(408) == .retry(after: nil, reason: "the push service answered 408"))
        #expect(answer(401) == .misconfigured(reason: "the push service refused the VAPID token (the push service answered 401)"))
        #expect(answer(403) == .gone(reason: "subscription made with another VAPID key (the push service answered 403)"))
        #expect(answer(403).deliveryOutcome == .gone(reason: "subscription made with another VAPID key (the push service answered 403)"))
        for status in [400, 413, 301, 422] {
            guard case .failed = answer(status) else {
                Issue.record("\(status) does not fail")
                continue
            }
        }
        #expect(answer(413).deliveryOutcome == .failed(reason: "the push service refused the message as too large (the push service answered 413)"))
    }

    @Test("Retry-After is read as seconds or as an HTTP-date in any of its three forms; a date past is no wait")
    func retryAfter() {
        #expect(RetryAfter.delay("120", now: Self.now) == .seconds(120))
        #expect(RetryAfter.delay(" 0 ", now: Self.now) == .zero)
        #expect(RetryAfter.delay("99999999999999999999999", now: Self.now) == .seconds(1 << 31))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:51:37 GMT", now: Self.now) == .seconds(120))
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:50:37 GMT", now: Self.now) == .seconds(60))
        #expect(RetryAfter.delay("Sun Nov  6 08:50:07 1994", now: Self.now) == .seconds(30))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == .zero)
        #expect(RetryAfter.delay("-5", now: Self.now) == nil)
        #expect(RetryAfter.delay("in a while", now: Self.now) == nil)
    }
}

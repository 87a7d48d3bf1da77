import Crypto
import Foundation
import VicinityCore

/// One alert for one device: what it says, what the app is told beside it, how long APNs may keep it for a
/// device that is off, and which earlier alert it replaces.
public struct APNsNotification: Hashable, Sendable {
    public var title: String
    public var body: String
    /// Custom keys beside `aps` (`"event": "poke"`, `"url": "/#friends"`), for the app to act on when opened.
    /// `aps` is Apple's own and cannot be one of them.
    public var data: [String: String]
    /// When APNs may stop trying (`apns-expiration`); nil is now or never.
    public var expiration: Date?
    /// An alert with the collapse ID of one the device still shows replaces it (`apns-collapse-id`).
    public var collapseID: String?
    /// Alerts of one thread are grouped on the device (`aps.thread-id`).
    public var threadID: String?

    public init(
        title: String, body: String, data: [String: String] = [:], expiration: Date? = nil, collapseID: String? = nil,
        threadID: String? = nil
    ) {
        self.title = title
        self.body = body
        self.data = data
        self.expiration = expiration
        self.collapseID = collapseID
        self.threadID = threadID
    }

    /// Apple, "Sending notification requests to APNs": `apns-expiration` is a UNIX epoch date in seconds; 0 has
    /// APNs try once and keep nothing. A date before 1970 is 0 as well.
    var expirationHeader: String {
        guard let expiration else { return "0" }
        return String(max(0, Int64(expiration.timeIntervalSince1970.rounded(.down))))
    }

    /// Apple, "Sending notification requests to APNs": `apns-collapse-id` must not exceed 64 bytes.
    static let maximumCollapseIDLength = 64

    /// The collapse ID as sent: itself when short enough, else the base64url SHA-256 of it (43 bytes), so that
    /// an ID always collapses with itself and never with another, which cutting it short could not promise.
    var collapseIDHeader: String? {
        guard let collapseID, !collapseID.isEmpty else { return nil }
        guard collapseID.utf8.count > Self.maximumCollapseIDLength else { return collapseID }
        return Base64URL.encode(Array(SHA256.hash(data: Array(collapseID.utf8))))
    }
}

import GeoCore
import VicinityCore

/// The wire form of push devices and preferences.
extension Wire {
    /// A device as its person's list shows it: the push service's host, never the endpoint or the token, which
    /// are the device's address and stay with the server.
    static func pushDevice(_ device: PushSubscription) -> JSONValue {
        .object([
            "id": .string(device.id.rawValue),
            "kind": .string(device.target.kind.rawValue),
            "service": .string(device.target.service),
            "created_at": .string(device.createdAt.rfc3339),
        ])
    }

    /// Every category, true when it pushes.
    static func pushPreferences(_ preferences: PushPreferences) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: PushCategory.allCases.map { ($0.rawValue, JSONValue.bool(!preferences.muted.contains($0))) }))
    }
}

import GeoCore
import VicinityCore

/// The wire form of devices and of what the phone apps are answered.
extension Wire {
    static func device(_ device: Device) -> JSONValue {
        .object([
            "id": .string(device.id.rawValue),
            "name": .string(device.name.rawValue),
            "kind": .string(device.kind.rawValue),
            "created_at": .string(device.createdAt.rfc3339),
            "last_used_at": device.lastUsedAt.map { .string($0.rfc3339) } ?? .null,
        ])
    }

    /// A device just added: its secret, this once, and what to type into its app.
    static func addedDevice(_ added: AddedDevice, origin: String) -> JSONValue {
        guard case .object(var fields) = device(added.device) else { return device(added.device) }
        fields["secret"] = .string(added.secret.text)
        switch added.device.kind {
        case .owntracks:
            // OwnTracks' HTTP mode: the URL, Basic credentials, and the device and tracker ids it publishes
            // under (booklet, `tech/http`: mode 3).
            fields["setup"] = .object([
                "mode": .string("http"),
                "url": .string(origin + "/owntracks"),
                "username": .string(added.username.rawValue),
                "password": .string(added.secret.text),
                "device_id": .string(added.device.id.rawValue),
                "tracker_id": .string(trackerID(added.device.name.rawValue)),
            ])
        case .traccar:
            fields["setup"] = .object([
                "server_url": .string(origin + "/traccar"),
                "device_identifier": .string(added.secret.text),
            ])
        }
        return .object(fields)
    }

    /// A friend as OwnTracks shows one (booklet, `tech/json`): a `location`, and before it a `card` with the
    /// name when the app is to learn the names. Both name the friend by one `topic`, as apps over MQTT do.
    static func ownTracks(_ friend: PhoneFriend) -> [JSONValue] {
        let topic = JSONValue.string("owntracks/\(friend.friend.username.rawValue)/vicinity")
        let tid = JSONValue.string(trackerID(friend.friend.displayName))
        var location: [String: JSONValue] = [
            "_type": .string("location"),
            "lat": .number(friend.position.coordinate.latitude),
            "lon": .number(friend.position.coordinate.longitude),
            "tst": .number(Double(friend.position.updatedAt.millisecondsSince1970 / 1000)),
            "tid": tid,
            "topic": topic,
        ]
        if let accuracy = friend.position.accuracy { location["acc"] = .number(accuracy.distance.meters.rounded()) }
        let card: [JSONValue] = friend.sendName
            ? [.object(["_type": .string("card"), "name": .string(friend.friend.displayName), "tid": tid, "topic": topic])] : []
        return card + [.object(location)]
    }

    /// Two letters for a map pin: the initials of the first two words, else the first two letters, upper case.
    static func trackerID(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0 == " " })
        let letters = words.count >= 2 ? [words[0].first, words[1].first].compactMap { $0 } : Array(name.prefix(2))
        let text = String(letters).uppercased()
        return text.isEmpty ? "??" : text
    }
}

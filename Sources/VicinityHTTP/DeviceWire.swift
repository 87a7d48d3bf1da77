import Foundation
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
            let url = origin + "/owntracks", username = added.username.rawValue, password = added.secret.text
            let deviceID = added.device.id.rawValue, tid = trackerID(added.device.name.rawValue)
            fields["setup"] = .object([
                "mode": .string("http"),
                "url": .string(url),
                "username": .string(username),
                "password": .string(password),
                "device_id": .string(deviceID),
                "tracker_id": .string(tid),
                "config_link": .string(ownTracksConfigLink(
                    url: url, username: username, password: password, deviceID: deviceID, trackerID: tid)),
            ])
        case .traccar:
            fields["setup"] = .object([
                "server_url": .string(origin + "/traccar"),
                "device_identifier": .string(added.secret.text),
            ])
        }
        return .object(fields)
    }

    /// The same settings as the app imports them in one tap or scan (booklet, `features/remoteconfig` and
    /// `tech/qr`): a `configuration` message, base64 in an `owntracks:///config?inline=` link. `mode` 3 is HTTP;
    /// `auth` makes the app send the username and password as Basic authentication. The base64's `+`, `/` and
    /// `=` are percent-encoded, so that no reader of the query takes a `+` for a space.
    static func ownTracksConfigLink(url: String, username: String, password: String, deviceID: String, trackerID: String) -> String {
        let configuration = JSONValue.object([
            "_type": .string("configuration"),
            "mode": .number(3),
            "url": .string(url),
            "auth": .bool(true),
            "username": .string(username),
            "password": .string(password),
            "deviceId": .string(deviceID),
            "tid": .string(trackerID),
        ])
        let inline = Data(configuration.jsonBytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")
            .replacingOccurrences(of: "=", with: "%3D")
        return "owntracks:///config?inline=" + inline
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

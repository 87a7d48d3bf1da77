import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// What the phone apps send, with the members their documents list, so that every member the service does not
/// use is seen and ignored.
enum PhonePayloads {
    /// An OwnTracks `location` in HTTP mode, with the members of the OwnTracks booklet's `tech/json` page
    /// (`_type`, `acc`, `alt`, `batt`, `bs`, `cog`, `conn`, `created_at`, `inregions`, `lat`, `lon`, `SSID`,
    /// `BSSID`, `t`, `tid`, `topic`, `tst`, `vac`, `vel`, `m`). `tst` and `created_at` are seconds since 1970.
    static func ownTracksLocation(lat: Double, lon: Double, tst: Int64, acc: Int = 12) -> String {
        """
        {"_type":"location","acc":\(acc),"alt":14,"batt":87,"bs":1,"cog":271,"conn":"w","created_at":\(tst + 2),
         "inregions":["Campus"],"lat":\(lat),"lon":\(lon),"m":1,"SSID":"eduroam","BSSID":"b0:be:76:0a:1b:2c",
         "t":"u","tid":"ma","topic":"owntracks/mai/phone","tst":\(tst),"vac":3,"vel":0}
        """
    }

    /// The other message types of `tech/json`, one each, as the apps send them in HTTP mode.
    static let ownTracksOthers: [String] = [
        #"{"_type":"transition","wtst":1732521600,"lat":33.7798,"lon":-118.1125,"tst":1732521700,"acc":10,"tid":"ma","event":"enter","desc":"Campus","t":"c"}"#,
        #"{"_type":"waypoint","tst":1732521600,"lat":33.7798,"lon":-118.1125,"rad":100,"desc":"Campus"}"#,
        #"{"_type":"waypoints","waypoints":[{"_type":"waypoint","tst":1732521600,"lat":33.7798,"lon":-118.1125,"rad":100,"desc":"Campus"}]}"#,
        #"{"_type":"lwt","tst":1732521600}"#,
        #"{"_type":"status","android":{"hib":1,"bo":1,"loc":0}}"#,
        #"{"_type":"card","name":"Mai Tran","face":"iVBORw0KGgo="}"#,
        #"{"_type":"cmd","action":"reportLocation"}"#,
        #"{"_type":"configuration","mode":3,"url":"https://example.org/owntracks"}"#,
    ]

    /// `_type: encrypted` (`tech/json`: the payload encrypted with a shared secret, base64 in `data`).
    static let ownTracksEncrypted = #"{"_type":"encrypted","data":"7lSMZg7yEeAjmtkLrHCGpHrz7fXUMRPWGoOVCjrh"}"#

    /// Traccar Client's query form (the OsmAnd protocol as Traccar's documentation gives it: `id`, `lat`,
    /// `lon`, `timestamp`, `hdop`, `altitude`, `speed`, plus `accuracy`, `bearing` and `batt`).
    static func traccarQuery(id: String, lat: Double, lon: Double, timestamp: Int64) -> String {
        "id=\(id)&lat=\(lat)&lon=\(lon)&timestamp=\(timestamp)&hdop=1.2&altitude=14.0&speed=0.0&bearing=271.0&accuracy=9.0&batt=87.0"
    }

    /// Traccar Client's JSON form (recent versions): `device_id` and a `location` with `timestamp`, `coords`,
    /// `is_moving`, `odometer`, `event`, `battery` and `activity`.
    static func traccarJSON(id: String, lat: Double, lon: Double, timestamp: String) -> String {
        """
        {"location":{"timestamp":"\(timestamp)","coords":{"latitude":\(lat),"longitude":\(lon),"accuracy":9,"speed":0,
         "heading":271,"altitude":14},"is_moving":false,"odometer":0,"event":"motionchange",
         "battery":{"level":0.87,"is_charging":false},"activity":{"type":"still"},"extras":{}},"device_id":"\(id)"}
        """
    }
}

/// A device added for `person` through the API: its id and secret.
func addDevice(_ client: any TestClientProtocol, for person: Person, kind: String = "owntracks", name: String = "Pixel") async throws -> (id: String, secret: String) {
    let added = try await client.call(.post, "/v1/me/devices", as: person, json: #"{"name":"\#(name)","kind":"\#(kind)"}"#)
    #expect(added.status == .created, "\(added.text)")
    return (try #require(added.object?["id"] as? String), try #require(added.object?["secret"] as? String))
}

/// HTTP Basic credentials as the phone apps send them, with a JSON body.
func basic(_ username: String, _ secret: String) -> HTTPFields {
    [.authorization: "Basic " + Data("\(username):\(secret)".utf8).base64EncodedString(), .contentType: "application/json"]
}

/// Posts an OwnTracks message as the app does.
func post(_ client: any TestClientProtocol, _ body: String, user: String, secret: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
    var headers = basic(user, secret)
    headers.append(contentsOf: extra)
    return try await client.execute(uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: body))
}

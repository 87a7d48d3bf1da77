import GeoCore
import VicinityCore

/// What an OwnTracks app posts in HTTP mode (the OwnTracks booklet, `tech/http` and `tech/json`): one JSON
/// object whose `_type` says what it is. Members this service does not use (`batt`, `bs`, `conn`, `SSID`,
/// `inregions`, …, and any the apps add later) are ignored, never refused.
enum OwnTracksMessage {
    /// `_type: location`: a fix to set the position from.
    case location(DeviceFix)
    /// Another type (`transition`, `waypoint(s)`, `lwt`, `status`, `card`, `cmd`, `configuration`, …), or an
    /// empty body: answered, and nothing changes.
    case ignored(type: String?)
    /// `_type: encrypted`: payload encryption (a shared secret this service does not hold).
    case encrypted

    /// Parses a body; throws 400 for text that is not a JSON object, or a location whose coordinates, accuracy
    /// or time are not valid.
    static func parse(_ bytes: [UInt8]) throws(APIError) -> OwnTracksMessage {
        // JSON's whitespace (RFC 8259 §2) only: an empty post.
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return .ignored(type: nil) }
        let value: JSONValue
        do {
            value = try JSONValue(jsonBytes: bytes)
        } catch {
            throw .invalidInput([ValidationError(field: "body", message: "is not valid JSON (\(error))")])
        }
        guard case .object(let members) = value else {
            throw .invalidInput([ValidationError(field: "body", message: "must be a JSON object")])
        }
        guard case .string(let type)? = members["_type"] else { return .ignored(type: nil) }
        switch type {
        case "location": return .location(try fix(members))
        case "encrypted": return .encrypted
        default: return .ignored(type: type)
        }
    }

    /// `lat`, `lon` (degrees), `acc` (metres, optional) and `tst` (seconds since 1970, optional).
    private static func fix(_ members: [String: JSONValue]) throws(APIError) -> DeviceFix {
        var errors: [ValidationError] = []
        let latitude = PhoneFields.degrees(members["lat"], field: "lat", errors: &errors)
        let longitude = PhoneFields.degrees(members["lon"], field: "lon", errors: &errors)
        let accuracy = PhoneFields.accuracy(members["acc"], field: "acc", errors: &errors)
        let takenAt = PhoneFields.epochSeconds(members["tst"], field: "tst", errors: &errors)
        return try PhoneFields.fix(latitude, longitude, accuracy, takenAt, errors: errors)
    }
}

/// What Traccar Client sends (the OsmAnd protocol, as Traccar's server reads it): `id`, `lat`, `lon`,
/// `timestamp`, `accuracy` and more as query or form parameters, or, from recent versions, a JSON body
/// `{"device_id", "location": {"timestamp", "coords": {"latitude", "longitude", "accuracy", …}, …}}`.
/// Other parameters and members are ignored.
struct TraccarReport {
    /// The device identifier the app was given: here, the device's secret.
    var deviceID: String
    var fix: DeviceFix

    /// From parameters (the query string and a form body, merged; `location=LAT,LON` stands for the pair).
    static func parse(parameters: [String: String]) throws(APIError) -> TraccarReport {
        var errors: [ValidationError] = []
        var latitudeText = parameters["lat"], longitudeText = parameters["lon"]
        if let pair = parameters["location"], latitudeText == nil, longitudeText == nil {
            let parts = pair.split(separator: ",", maxSplits: 1)
            if parts.count == 2 {
                latitudeText = String(parts[0])
                longitudeText = String(parts[1])
            }
        }
        let latitude = PhoneFields.degrees(latitudeText.map(PhoneFields.number), field: "lat", errors: &errors)
        let longitude = PhoneFields.degrees(longitudeText.map(PhoneFields.number), field: "lon", errors: &errors)
        let accuracy = PhoneFields.accuracy(parameters["accuracy"].map(PhoneFields.number), field: "accuracy", errors: &errors)
        let takenAt = parameters["timestamp"].flatMap { text -> Timestamp? in
            if let seconds = Double(text) { return PhoneFields.epochSeconds(.number(seconds), field: "timestamp", errors: &errors) }
            return PhoneFields.instant(.string(text), field: "timestamp", errors: &errors)
        }
        let id = parameters["id"] ?? parameters["deviceid"]
        if id == nil { errors.append(ValidationError(field: "id", message: "is required: the device identifier the app was given")) }
        let fix = try PhoneFields.fix(latitude, longitude, accuracy, takenAt, errors: errors)
        return TraccarReport(deviceID: id ?? "", fix: fix)
    }

    /// From a JSON body.
    static func parse(json bytes: [UInt8]) throws(APIError) -> TraccarReport {
        let value: JSONValue
        do {
            value = try JSONValue(jsonBytes: bytes)
        } catch {
            throw .invalidInput([ValidationError(field: "body", message: "is not valid JSON (\(error))")])
        }
        guard case .object(let root) = value else {
            throw .invalidInput([ValidationError(field: "body", message: "must be a JSON object")])
        }
        var errors: [ValidationError] = []
        guard case .string(let id)? = root["device_id"] else {
            throw .invalidInput([ValidationError(field: "device_id", message: "is required: the device identifier the app was given")])
        }
        guard case .object(let location)? = root["location"], case .object(let coords)? = location["coords"] else {
            throw .invalidInput([ValidationError(field: "location", message: "is required, with coords")])
        }
        let latitude = PhoneFields.degrees(coords["latitude"], field: "location.coords.latitude", errors: &errors)
        let longitude = PhoneFields.degrees(coords["longitude"], field: "location.coords.longitude", errors: &errors)
        let accuracy = PhoneFields.accuracy(coords["accuracy"], field: "location.coords.accuracy", errors: &errors)
        let takenAt = location["timestamp"].flatMap { PhoneFields.instant($0, field: "location.timestamp", errors: &errors) }
        return TraccarReport(deviceID: id, fix: try PhoneFields.fix(latitude, longitude, accuracy, takenAt, errors: errors))
    }
}

/// The fields both apps send, each checked by the service's own rules.
enum PhoneFields {
    static func number(_ text: String) -> JSONValue { Double(text).map(JSONValue.number) ?? .string(text) }

    static func degrees(_ value: JSONValue?, field: String, errors: inout [ValidationError]) -> Double? {
        guard let value else {
            errors.append(ValidationError(field: field, message: "is required"))
            return nil
        }
        guard case .number(let degrees) = value, degrees.isFinite else {
            errors.append(ValidationError(field: field, message: "must be a number of degrees"))
            return nil
        }
        return degrees
    }

    static func accuracy(_ value: JSONValue?, field: String, errors: inout [ValidationError]) -> Accuracy? {
        guard let value, value != .null else { return nil }
        guard case .number(let metres) = value, let accuracy = try? Accuracy(meters: metres) else {
            errors.append(ValidationError(field: field, message: "must be a number of metres in [0, \(Int(Accuracy.maximum.meters))]"))
            return nil
        }
        return accuracy
    }

    /// Seconds since 1970 (OwnTracks' `tst`, OsmAnd's `timestamp`); milliseconds are taken too, told apart by
    /// size (seconds pass 10^11 only in the year 5138).
    static func epochSeconds(_ value: JSONValue?, field: String, errors: inout [ValidationError]) -> Timestamp? {
        guard let value, value != .null else { return nil }
        guard case .number(let number) = value, number.isFinite, number >= 0, number < 1e14 else {
            errors.append(ValidationError(field: field, message: "must be a time in seconds since 1970"))
            return nil
        }
        let milliseconds = number < 1e11 ? number * 1000 : number
        return Timestamp(millisecondsSince1970: Int64(milliseconds.rounded()))
    }

    /// An RFC 3339 instant ("2026-11-25T08:00:00.000Z"), or seconds since 1970 as a number.
    static func instant(_ value: JSONValue, field: String, errors: inout [ValidationError]) -> Timestamp? {
        switch value {
        case .number: return epochSeconds(value, field: field, errors: &errors)
        case .string(let text):
            if let time = Timestamp(rfc3339: text) { return time }
            errors.append(ValidationError(field: field, message: "must be an RFC 3339 time such as 2026-11-25T08:00:00Z"))
            return nil
        default:
            errors.append(ValidationError(field: field, message: "must be a time"))
            return nil
        }
    }

    static func fix(
        _ latitude: Double?, _ longitude: Double?, _ accuracy: Accuracy?, _ takenAt: Timestamp?, errors: [ValidationError]
    ) throws(APIError) -> DeviceFix {
        var errors = errors
        var coordinate: Coordinate?
        if let latitude, let longitude {
            do {
                coordinate = try Coordinate(latitude: latitude, longitude: longitude)
            } catch {
                errors.append(ValidationError(field: "lat", message: "latitude must be within [-90, 90] and longitude within [-180, 180]"))
            }
        }
        guard errors.isEmpty, let coordinate else { throw .invalidInput(errors) }
        return DeviceFix(coordinate: coordinate, accuracy: accuracy, takenAt: takenAt)
    }
}

import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import VicinityCore

/// JSON as the service writes it: keys sorted so that responses are byte-for-byte reproducible, slashes
/// unescaped so that URLs read as URLs.
enum WireEncoding {
    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ByteBuffer(bytes: try encoder.encode(value))
    }

    static func response(
        _ value: some Encodable, contentType: String = "application/json", negotiated: Bool = false
    ) throws -> Response {
        ok(try encode(value), contentType: contentType, negotiated: negotiated)
    }

    /// The place endpoints' answers: JSON values written by `JSONValue` itself, with the same sorted keys and
    /// unescaped slashes as `encode`, without `JSONEncoder`'s cost.
    static func response(
        json value: JSONValue, status: HTTPResponse.Status = .ok, contentType: String = "application/json",
        negotiated: Bool = false
    ) -> Response {
        answer(json: value, status: status, contentType: contentType, negotiated: negotiated).response
    }

    /// The same answer whole, for routes that may be answered from the event loop (`ImmediateAnswer`).
    static func answer(
        json value: JSONValue, status: HTTPResponse.Status = .ok, contentType: String = "application/json",
        negotiated: Bool = false
    ) -> ImmediateAnswer {
        ImmediateAnswer(
            status: status, headers: headers(contentType: contentType, negotiated: negotiated),
            body: ByteBuffer(bytes: value.jsonBytes))
    }

    static func response(bytes: [UInt8], contentType: String = "application/json", negotiated: Bool = false) -> Response {
        ok(ByteBuffer(bytes: bytes), contentType: contentType, negotiated: negotiated)
    }

    static func answer(bytes: [UInt8], contentType: String = "application/json", negotiated: Bool = false) -> ImmediateAnswer {
        ImmediateAnswer(status: .ok, headers: headers(contentType: contentType, negotiated: negotiated), body: ByteBuffer(bytes: bytes))
    }

    private static func ok(_ body: ByteBuffer, status: HTTPResponse.Status = .ok, contentType: String, negotiated: Bool) -> Response {
        Response(status: status, headers: headers(contentType: contentType, negotiated: negotiated), body: .init(byteBuffer: body))
    }

    private static func headers(contentType: String, negotiated: Bool) -> HTTPFields {
        var headers: HTTPFields = [.contentType: contentType]
        // Caches must keep the JSON and GeoJSON forms of one URL apart.
        if negotiated { headers[.vary] = "Accept" }
        return headers
    }
}

/// Which form of a list the client asked for.
enum Representation: Equatable {
    case json
    case geoJSON

    static let geoJSONMediaType = "application/geo+json"

    /// GeoJSON when the `Accept` header names `application/geo+json` at least as strongly as
    /// `application/json`; plain JSON otherwise, including for `*/*` and for types this service does not
    /// make (a lenient default: every client of this API reads JSON).
    init(accept: String?) {
        var geoJSONQuality = 0.0
        var jsonQuality = 0.0
        for (type, quality) in HTTPText.weighted(accept) {
            switch type {
            case Self.geoJSONMediaType: geoJSONQuality = max(geoJSONQuality, quality)
            case "application/json": jsonQuality = max(jsonQuality, quality)
            default: break
            }
        }
        self = geoJSONQuality > 0 && geoJSONQuality >= jsonQuality ? .geoJSON : .json
    }
}

/// The wire form of places, built once as JSON values so that the JSON list items and the GeoJSON feature
/// properties carry exactly the same fields. The one writer of the service's JSON: the HTTP answers, the
/// events and the command line's output.
public enum Wire {
    static func place(_ place: Place) -> [String: JSONValue] {
        [
            "id": .string(place.id.rawValue),
            "name": .string(place.name),
            "category": .string(place.category.rawValue),
            "lat": .number(place.coordinate.latitude),
            "lon": .number(place.coordinate.longitude),
            "aliases": .array(place.aliases.map(JSONValue.string)),
            "attributes": .object(place.attributes.mapValues(JSONValue.string)),
        ]
    }

    /// A place with the distance and bearing GeoCore computed from the query's centre, carrying `members`.
    static func hit(_ hit: PlaceHit, members: HitMembers = .place) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for member in HitMember.allCases where members.contains(member) { fields[member.rawValue] = member.value(in: hit) }
        return fields
    }

    /// The place's outline as a GeoJSON geometry, or null when it has none.
    static func footprint(_ place: Place) -> JSONValue {
        place.footprint.map { GeoJSONGeometry.multiPolygon($0).jsonValue } ?? .null
    }

    /// Where a point is: the closest place with the distance and bearing to it, the label, and the campuses;
    /// nil when there is no place to be closest to.
    public static func closest(_ whereabouts: Whereabouts) -> JSONValue? {
        guard let closest = whereabouts.closest else { return nil }
        return .object([
            "place": .object(place(closest.place)),
            "distance_m": .number(closest.distance.meters),
            "bearing_deg": .number(closest.bearing.degrees),
            "label": .string(whereabouts.label),
            "on_campus": whereabouts.onCampus.map(JSONValue.bool) ?? .null,
            "campuses": campuses(whereabouts.campuses),
        ])
    }

    /// Places within a radius, nearest first, as the first page of `GET /v1/places/nearby` writes them
    /// (without a next page): what the command line prints too.
    public static func nearby(_ hits: [PlaceHit]) -> [UInt8] {
        hitsJSON("places", hits, next: nil, members: .place)
    }

    /// Points at the places, `[lon, lat]` as GeoCore writes them, with `fields` as the properties.
    static func featureCollection(_ items: [(place: Place, fields: [String: JSONValue])]) -> GeoJSONFeatureCollection {
        GeoJSONFeatureCollection(features: items.map { item in
            GeoJSONFeature(id: item.place.id.rawValue, geometry: .point(item.place.coordinate), properties: item.fields)
        })
    }

    /// A list under `key` in JSON, or a FeatureCollection, as the client asked.
    static func list(
        _ key: String, _ items: [(place: Place, fields: [String: JSONValue])], as representation: Representation
    ) -> Response {
        switch representation {
        case .json:
            WireEncoding.response(json: .object([key: .array(items.map { .object($0.fields) })]), negotiated: true)
        case .geoJSON:
            WireEncoding.response(
                json: featureCollection(items).jsonValue, contentType: Representation.geoJSONMediaType, negotiated: true)
        }
    }

    /// One page of hits in JSON, written straight to bytes: the same bytes as `page` writes through JSON values
    /// (sorted keys, same numbers and escapes), without building a dictionary per hit, which was most of the
    /// cost of a long answer.
    static func hitsJSON(_ key: String, _ hits: [PlaceHit], next: String?, members: HitMembers) -> [UInt8] {
        // Each member's key, quoted and with its colon, written once for the whole page.
        // Typed as `writeHit` takes it: an array of unlabelled pairs would be converted, pair by pair through a
        // dynamic cast, at every hit.
        let written: [(HitMember, key: [UInt8])] = HitMember.allCases.filter(members.contains).map { member in
            var key: [UInt8] = []
            JSONValue.writeString(member.rawValue, to: &key)
            key.append(UInt8(ascii: ":"))
            return (member, key)
        }
        var bytes: [UInt8] = []
        // About 20 bytes a member (a key and a short value) on average: a guess that saves most regrowths.
        bytes.reserveCapacity(64 + hits.count * 20 * written.count)
        bytes += #"{"next":"#.utf8
        if let next { JSONValue.writeString(next, to: &bytes) } else { bytes += "null".utf8 }
        bytes += ",".utf8
        JSONValue.writeString(key, to: &bytes)
        bytes += ":[".utf8
        for (index, hit) in hits.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeHit(hit, members: written, to: &bytes)
        }
        bytes += "]}".utf8
        return bytes
    }

    /// One hit's object with the `members` (and their keys as written) given in `HitMember` order, which is the
    /// sorted order `JSONValue` writes keys in; each value as `HitMember.value(in:)` would write it.
    private static func writeHit(_ hit: PlaceHit, members: [(HitMember, key: [UInt8])], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, (member, key)) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += key
            switch member {
            case .aliases:
                bytes.append(UInt8(ascii: "["))
                for (index, alias) in hit.place.aliases.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONValue.writeString(alias, to: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            case .attributes:
                bytes.append(UInt8(ascii: "{"))
                for (index, key) in hit.place.attributes.keys.sorted().enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONValue.writeString(key, to: &bytes)
                    bytes.append(UInt8(ascii: ":"))
                    JSONValue.writeString(hit.place.attributes[key, default: ""], to: &bytes)
                }
                bytes.append(UInt8(ascii: "}"))
            case .bearing: bytes += JSONValue.numberText(hit.bearing.degrees).utf8
            case .category: JSONValue.writeString(hit.place.category.rawValue, to: &bytes)
            case .directions: JSONValue.writeString(DirectionsURL.to(hit.place.coordinate), to: &bytes)
            case .distance: bytes += JSONValue.numberText(hit.distance.meters).utf8
            case .footprint: footprint(hit.place).write(to: &bytes)
            case .id: JSONValue.writeString(hit.place.id.rawValue, to: &bytes)
            case .latitude: bytes += JSONValue.numberText(hit.place.coordinate.latitude).utf8
            case .longitude: bytes += JSONValue.numberText(hit.place.coordinate.longitude).utf8
            case .name: JSONValue.writeString(hit.place.name, to: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// One page of places as a GeoJSON FeatureCollection, with `next` (the URL of the next page, or null on the
    /// last) as a foreign member and as a `Link: <…>; rel="next"` header. The JSON form is `hitsJSON`.
    static func geoJSONPage(
        _ items: [(place: Place, fields: [String: JSONValue])], next: String?, extra: [String: JSONValue] = [:]
    ) -> ImmediateAnswer {
        guard case .object(var collection) = featureCollection(items).jsonValue else {
            preconditionFailure("a FeatureCollection is a JSON object")
        }
        collection["next"] = next.map(JSONValue.string) ?? .null
        collection.merge(extra) { _, new in new }
        let answer = WireEncoding.answer(
            json: .object(collection), contentType: Representation.geoJSONMediaType, negotiated: true)
        return withNextLink(answer, next: next)
    }

    static func withNextLink(_ answer: ImmediateAnswer, next: String?) -> ImmediateAnswer {
        var answer = answer
        if let next { answer.headers[linkField] = "<\(next)>; rel=\"next\"" }
        return answer
    }

    /// RFC 8288 web linking; HTTPTypes names no such field. "Link" is a valid token, so the name exists.
    private static let linkField: HTTPField.Name = {
        guard let name = HTTPField.Name("Link") else { preconditionFailure("Link is a valid field name") }
        return name
    }()

    /// The URL of the page after this request's: its path and parameters as the client sent them, with the
    /// cursor replaced. Relative, so that it stays right behind proxies that rewrite the host.
    static func nextURL(path: String, query: String?, cursor: NearbyCursor?) -> String? {
        guard let cursor else { return nil }
        let kept = (query ?? "").split(separator: "&").filter { parameter in
            let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return HTTPText.formDecoded(name[...]) != "cursor"
        }
        return path + "?" + (kept + ["cursor=" + cursor.token[...]]).joined(separator: "&")
    }
}

/// Links that open directions in the phone's map app.
///
/// Google Maps URLs (`https://www.google.com/maps/dir/?api=1&destination=LAT,LON`) are documented as
/// cross-platform: on Android and iOS they open the Google Maps app when it is installed and the browser
/// otherwise, and on a desktop they open maps.google.com. A `geo:` URI only works on Android and an Apple
/// Maps link only opens the map app on Apple devices. The start is left out so that the app uses the
/// phone's current position.
enum DirectionsURL {
    static func to(_ destination: Coordinate) -> String {
        "https://www.google.com/maps/dir/?api=1&destination="
            + degrees(destination.latitude) + "%2C" + degrees(destination.longitude)
    }

    /// Plain decimal notation with at most 7 decimals (about 1 cm), never an exponent, which map apps
    /// would not read.
    static func degrees(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}

extension Wire {
    /// A page of nearby places or temples in the form the request asked for, with its `next` link.
    /// A page of hits as the client asked; `extra` are members beside the list (written after it, as their
    /// names sort after every list key and `next`).
    static func hits(
        _ key: String, _ page: NearbyPage, members: HitMembers, extra: [String: JSONValue] = [:], request: Request
    ) -> ImmediateAnswer {
        let next = nextURL(path: request.uri.path, query: request.uri.query, cursor: page.next)
        switch Representation(accept: request.headers[.accept]) {
        case .json:
            var bytes = hitsJSON(key, page.hits, next: next, members: members)
            if !extra.isEmpty {
                precondition(extra.keys.allSatisfy { $0 > key && $0 > "next" }, "extra members sort after the list")
                bytes.removeLast()  // the closing brace
                for name in extra.keys.sorted() {
                    bytes.append(UInt8(ascii: ","))
                    JSONValue.writeString(name, to: &bytes)
                    bytes.append(UInt8(ascii: ":"))
                    extra[name, default: .null].write(to: &bytes)
                }
                bytes.append(UInt8(ascii: "}"))
            }
            return withNextLink(WireEncoding.answer(bytes: bytes, negotiated: true), next: next)
        case .geoJSON:
            let items = page.hits.map { ($0.place, hit($0, members: members)) }
            return geoJSONPage(items, next: next, extra: extra)
        }
    }
}

import Foundation
import GeoCore
import Hummingbird
import Testing
import VicinityCore
@testable import VicinityHTTP

@Suite("Wire forms")
struct WireTests {
    /// Places whose text needs every kind of escape, with and without aliases and attributes, and one with a
    /// footprint.
    static func places() throws -> [Place] {
        let hall = try Coordinate(latitude: 33.779842, longitude: -118.112526)
        let watPho = try Coordinate(latitude: 13.746549, longitude: 100.492766)
        return [
            try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", aliases: ["HSCI", "Café \"Sci\""],
                      attributes: ["code": "HSCI", "note": "back\\slash, tab\t, line\nbreak, bell\u{07}", "ü": "ñ"], coordinate: hall),
            try Place(id: PlaceID("wat-pho/1"), name: "วัดโพธิ์", category: "buddhist_temple", coordinate: watPho),
            try Place(id: PlaceID("zero"), name: "Null Island", category: "shrine",
                      coordinate: Coordinate(latitude: 0, longitude: 0)),
            try Footprints.pavilionGym().place,
        ]
    }

    @Test("the direct writer of a page of hits gives the same bytes as the JSON values it replaces")
    func directWriterMatchesJSONValues() throws {
        let centre = try Coordinate(latitude: 33.78, longitude: -118.11)
        let hits = try Self.places().map { PlaceHit(place: $0, from: centre) }
        for next in [nil, "/v1/places/nearby?lat=1&lon=2&cursor=abc"] as [String?] {
            for (directions, footprints) in [(false, false), (true, false), (false, true)] {
                let key = directions ? "temples" : "places"
                let direct = Wire.hitsJSON(key, hits, next: next, directions: directions, footprints: footprints)
                let viaValues = JSONValue.object([
                    key: .array(hits.map { .object(directions ? Wire.temple($0) : Wire.hit($0, footprint: footprints)) }),
                    "next": next.map(JSONValue.string) ?? .null,
                ]).jsonBytes
                #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaValues, as: UTF8.self),
                        "directions \(directions), footprints \(footprints), next \(next ?? "none")")
            }
        }
        #expect(Wire.hitsJSON("places", [], next: nil, directions: false) == Array(#"{"next":null,"places":[]}"#.utf8))
    }
}

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

    @Test("the direct writer of a page of hits gives the same bytes as the JSON values it replaces, for every choice of members")
    func directWriterMatchesJSONValues() throws {
        let centre = try Coordinate(latitude: 33.78, longitude: -118.11)
        let hits = try Self.places().map { PlaceHit(place: $0, from: centre) }
        var withOutline = HitMembers.place
        withOutline.insert(.footprint)
        let choices: [(String, HitMembers)] = [
            ("places", .place), ("temples", .temple), ("places", withOutline), ("places", [.id, .distance]),
            ("places", [.name]), ("places", HitMembers(HitMember.allCases)),
        ]
        for next in [nil, "/v1/places/nearby?lat=1&lon=2&cursor=abc"] as [String?] {
            for (key, members) in choices {
                let direct = Wire.hitsJSON(key, hits, next: next, members: members)
                let viaValues = JSONValue.object([
                    key: .array(hits.map { .object(Wire.hit($0, members: members)) }),
                    "next": next.map(JSONValue.string) ?? .null,
                ]).jsonBytes
                #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaValues, as: UTF8.self),
                        "members \(HitMember.allCases.filter(members.contains)), next \(next ?? "none")")
            }
        }
        #expect(Wire.hitsJSON("places", [], next: nil, members: .place) == Array(#"{"next":null,"places":[]}"#.utf8))
        let compact = Wire.hitsJSON("places", Array(hits.prefix(1)), next: nil, members: [.distance, .id])
        #expect(String(decoding: compact, as: UTF8.self)
                == #"{"next":null,"places":[{"distance_m":\#(JSONValue.numberText(hits[0].distance.meters)),"id":"csulb-hsci"}]}"#)
    }

    @Test("hit members are listed in the order JSON writes keys, and a hit carries what a place carries, the same")
    func hitMembersFollowKeyOrder() throws {
        let names = HitMember.allCases.map(\.rawValue)
        #expect(names == names.sorted())
        let centre = try Coordinate(latitude: 13.7, longitude: 100.5)
        for place in try Self.places() {
            let hit = Wire.hit(PlaceHit(place: place, from: centre))
            let placeOnly = Wire.place(place)
            #expect(hit.filter { placeOnly[$0.key] != nil } == placeOnly)
            #expect(Set(hit.keys).subtracting(placeOnly.keys) == ["distance_m", "bearing_deg"])
        }
    }
}

import GeoCore
import Testing
import VicinityCore

/// Hall of Science and Microbiology, CSULB, as in Data/csulb-buildings.csv.
private let hallOfScience = (lat: 33.779842, lon: -118.112526)
private let microbiology = (lat: 33.779369, lon: -118.111778)

private func building(_ id: String, _ name: String, _ position: (lat: Double, lon: Double)) throws -> Place {
    try Place(id: PlaceID(id), name: name, category: "academic",
              coordinate: Coordinate(latitude: position.lat, longitude: position.lon))
}

@Suite("Domain values")
struct DomainValueTests {
    @Test("categories are normalised to lower-case words joined by underscores")
    func categoryNormalisation() throws {
        // Through String values: a literal argument would be read as a Category literal instead.
        func category(_ text: String) throws -> String { try Category(text).rawValue }
        #expect(try category("Main Campus") == "main_campus")
        #expect(try category("  Buddhist-Temple ") == "buddhist_temple")
        #expect(try category("Café 24") == "café_24")
        #expect(throws: ValidationError.self) { try category(" - ") }
        #expect(throws: ValidationError.self) { try category(String(repeating: "a", count: 65)) }
    }

    @Test("place ids refuse empty, overlong, padded and control-character values")
    func placeIDs() throws {
        #expect(try PlaceID("way/123").rawValue == "way/123")
        for bad in ["", " x", "x ", "a\nb", "a\u{7F}b", String(repeating: "x", count: 129)] {
            #expect(throws: ValidationError.self) { try PlaceID(bad) }
        }
    }

    @Test("a place needs a name; aliases are trimmed, deduplicated and never repeat the name")
    func placeNames() throws {
        let point = try Coordinate(latitude: hallOfScience.lat, longitude: hallOfScience.lon)
        #expect(throws: ValidationError(field: "name", message: "must not be empty")) {
            try Place(id: PlaceID("x"), name: "  ", category: "academic", coordinate: point)
        }
        let place = try Place(id: PlaceID("csulb-hsci"), name: " Hall of Science ", category: "academic",
                              aliases: ["HSCI", " HSCI", "Hall of Science", ""], coordinate: point)
        #expect(place.name == "Hall of Science")
        #expect(place.aliases == ["HSCI"])
    }

    @Test("folding lowers case, drops accents and makes every run of white space, line breaks included, one space")
    func folding() {
        #expect(NameMatch.folded("Hall of Science") == "hall of science")
        #expect(NameMatch.folded("Café  Sixty-Nine") == "cafe sixty-nine")
        #expect(NameMatch.folded("Hall of\nScience\t") == "hall of science")
        #expect(NameMatch.folded(" Zürich\u{00A0}Altstadt ") == "zurich altstadt")
        // Thai vowel and tone marks above and below (U+0E31, U+0E34, U+0E4C here) are nonspacing marks and fold
        // away like accents, so "วัดโพธิ์" (Wat Pho) is found with or without them.
        #expect(NameMatch.folded("วัดโพธิ์") == "\u{0E27}\u{0E14}\u{0E42}\u{0E1E}\u{0E18}")
        #expect(NameMatch.folded("") == "")
        #expect(!NameMatch.folded("A\r\nB\u{2028}C").contains { $0.isNewline })
    }

    @Test("radius must be in (0, 50 000] metres and limit in [1, 500], with 1000 m and 20 as defaults")
    func queryBounds() throws {
        #expect(SearchRadius.standard.distance == .meters(1000))
        #expect(ResultLimit.standard.value == 20)
        #expect(try SearchRadius(meters: 50_000).distance == .meters(50_000))
        for bad in [0, -1, 50_000.001, .nan, .infinity] {
            #expect(throws: ValidationError.self) { try SearchRadius(meters: bad) }
        }
        #expect(try ResultLimit(500).value == 500)
        #expect(throws: ValidationError.self) { try ResultLimit(0) }
        #expect(throws: ValidationError.self) { try ResultLimit(501) }
    }
}

@Suite("Position labels")
struct LabelTests {
    @Test("within 100 m of the closest place a position is Around it")
    func around() async throws {
        let store = InMemoryStore()
        _ = try await store.upsert([try building("csulb-hsci", "Hall of Science", hallOfScience)])
        let locator = Locator(places: store, campuses: store)
        let here = try Coordinate(latitude: microbiology.lat, longitude: microbiology.lon)
        let whereabouts = try await locator.whereabouts(of: here)
        #expect(whereabouts.closest?.place.name == "Hall of Science")
        #expect(try #require(whereabouts.closest).distance < .meters(100))
        #expect(whereabouts.label == "Around Hall of Science")
        #expect(whereabouts.onCampus == nil, "no campus is loaded, so on-campus is unknown")
    }

    @Test("farther away the label gives distance and direction, and beyond 1 km it says so honestly")
    func fartherAway() throws {
        let rule = LabelRule.standard
        let hall = try building("csulb-hsci", "Hall of Science", hallOfScience)
        // Walter Pyramid (csulb-pyr in Data/) is about 870 m north, a little west, of Hall of Science.
        let pyramid = try Coordinate(latitude: 33.787445, longitude: -118.114403)
        let hit = PlaceHit(place: hall, from: pyramid)
        #expect(hit.distance > .meters(100) && hit.distance < .meters(1000))
        let metres = Int(hit.distance.meters.rounded())
        #expect(rule.label(closest: hit, onCampus: nil) == "\(metres) m N of Hall of Science")
        #expect(rule.label(closest: hit, onCampus: true) == "On campus, \(metres) m N of Hall of Science")
        // Wat Pho, Bangkok, from Data/bangkok-temples.csv.
        let far = PlaceHit(place: hall, from: try Coordinate(latitude: 13.746549, longitude: 100.492766))
        #expect(rule.label(closest: far, onCampus: false) == "Away from known places")
        #expect(rule.label(closest: nil, onCampus: true) == "On campus")
        #expect(rule.label(closest: nil, onCampus: nil) == "Away from known places")
    }

    @Test("on_campus is true inside a loaded boundary and false outside it")
    func onCampus() async throws {
        let store = InMemoryStore()
        _ = try await store.upsert([try building("csulb-hsci", "Hall of Science", hallOfScience)])
        // A synthetic rectangle around the CSULB buildings; no real boundary is shipped.
        let corners = [(33.77, -118.12), (33.77, -118.10), (33.79, -118.10), (33.79, -118.12), (33.77, -118.12)]
        let boundary = MultiPolygon(try Polygon(exterior: corners.map { try Coordinate(latitude: $0.0, longitude: $0.1) }))
        _ = try await store.upsert([try Campus(id: PlaceID("test"), name: "Test", boundary: boundary)])
        let locator = Locator(places: store, campuses: store)
        let inside = try await locator.whereabouts(of: Coordinate(latitude: microbiology.lat, longitude: microbiology.lon))
        #expect(inside.onCampus == true)
        #expect(inside.campuses.map(\.name) == ["Test"])
        let outside = try await locator.whereabouts(of: Coordinate(latitude: 13.746549, longitude: 100.492766))
        #expect(outside.onCampus == false)
    }
}

import Foundation
import GeoCore
import Logging
import Testing
import VicinityCore
@testable import VicinityImport
import VicinitySpatiaLite
import VicinitySQL

private func fixture(_ name: String) throws -> String {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
    return url.path
}

/// A temporary SpatiaLite database for a test, removed afterwards.
private final class TemporaryStore {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-import-\(UUID().uuidString).sqlite").path
    lazy var store: SpatiaLiteStore = {
        do { return try SpatiaLiteStore(path: path, logger: Logger(label: "test")) } catch {
            preconditionFailure("cannot open a temporary store: \(error)")
        }
    }()
    deinit {
        try? store.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

@Suite("CSV import")
struct CSVImportTests {
    @Test("the shipped CSULB buildings file imports every row with codes and aliases searchable")
    func goodCSV() async throws {
        let file = try PlaceFileReader.read(path: try fixture("csulb-buildings.csv"))
        #expect(file.places.count == 91)
        let hall = try #require(file.places.first { $0.id.rawValue == "csulb-hsci" })
        #expect(hall.name == "Hall of Science")
        #expect(hall.aliases.contains("HSCI"))
        #expect(hall.attributes["code"] == "HSCI")
        #expect(hall.attributes["kind"] == "building")
        #expect(hall.attributes["lat"] == nil, "position columns are not repeated as attributes")
        let temporary = TemporaryStore()
        #expect(try await temporary.store.upsert(file.places) == UpsertSummary(inserted: 91))
        #expect(try await temporary.store.search(PlaceSearch(text: "hsci")).map(\.id.rawValue) == ["csulb-hsci"])
    }

    @Test("re-importing the same file changes nothing")
    func idempotent() async throws {
        let temporary = TemporaryStore()
        let places = try PlaceFileReader.read(path: try fixture("csulb-buildings.csv")).places
        _ = try await temporary.store.upsert(places)
        let again = try PlaceFileReader.read(path: try fixture("csulb-buildings.csv")).places
        #expect(try await temporary.store.upsert(again) == UpsertSummary(unchanged: 91))
    }

    @Test("a file with several bad rows reports every one with its line and imports nothing")
    func badRows() throws {
        // Real rows from Data/csulb-buildings.csv, five of them broken on purpose.
        let csv = """
            id,name,category,lat,lon,code
            csulb-anac,Anna W. Ngai Alumni Center,administrative,33.781891,-118.116859,ANAC
            csulb-as,Academic Services,administrative,north,-118.114067,AS
            csulb-bac,,athletic,33.786331,-118.114876,BAC
            csulb-bbs,Beach Building Services,administrative,91.783669,-118.108528,BBS
            csulb-anac,Anna W. Ngai Alumni Center,administrative,33.781891,-118.116859,ANAC
            csulb-hsci,Hall of Science,academic,33.779842
            ,Hall of Science,academic,33.779842,-118.112526,HSCI
            """
        #expect {
            try PlaceFileReader.read(data: Data(csv.utf8), format: .csv)
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            let lines = error.problems.map(\.location)
            return lines == ["line 3", "line 4", "line 5", "line 7", "line 8", "line 6"]
                && error.problems[0].message.contains("lat")
                && error.problems[1].message.contains("name")
                && error.problems[2].message.contains("latitude 91.783669")
                && error.problems[3].message.contains("fields")
                && error.problems[4].message.contains("id")
                && error.problems[5].message.contains("repeats line 2")
                && error.summary == nil
        }
    }

    @Test("a bad file leaves the database exactly as it was")
    func badFileChangesNothing() async throws {
        let temporary = TemporaryStore()
        let places = try PlaceFileReader.read(path: try fixture("csulb-buildings.csv")).places
        _ = try await temporary.store.upsert(places)
        var text = try String(contentsOfFile: try fixture("csulb-buildings.csv"), encoding: .utf8)
        text = text.replacingOccurrences(of: "Hall of Science,academic,33.779842", with: "Hall of Science,academic,xx")
        #expect(throws: ImportError.self) { try PlaceFileReader.read(data: Data(text.utf8), format: .csv) }
        #expect(try await temporary.store.count() == 91)
        #expect(try await temporary.store.place(id: PlaceID("csulb-hsci")) == places.first { $0.id.rawValue == "csulb-hsci" })
    }

    @Test("a missing category column is refused unless a category is given for the whole file")
    func categoryColumn() throws {
        let csv = "id,name,lat,lon\nth-bkk-001,Wat Pho,13.746549,100.492766\n"
        #expect(throws: ImportError.self) { try PlaceFileReader.read(data: Data(csv.utf8), format: .csv) }
        let file = try PlaceFileReader.read(data: Data(csv.utf8), format: .csv, category: "buddhist_temple")
        #expect(file.places.map(\.category) == ["buddhist_temple"])
    }

    @Test("easting and northing in metres in a CSV are refused as projected coordinates")
    func projectedCSV() throws {
        // Wat Nong Din Daeng in UTM 47N metres, from Data/nakhon-pathom-religious-places.csv (utm47n_x, utm47n_y).
        let csv = "id,name,category,lat,lon\nnp-lm-1244,Wat Nong Din Daeng,buddhist_temple,1525496.362,607091.891\n"
        #expect {
            try PlaceFileReader.read(data: Data(csv.utf8), format: .csv)
        } throws: { error in
            (error as? ImportError)?.summary?.contains("projected metres") == true
        }
    }
}

@Suite("GeoJSON import")
struct GeoJSONImportTests {
    @Test("OpenStreetMap building footprints with holes and a MultiPolygon import with a position inside each footprint")
    func footprints() async throws {
        let file = try PlaceFileReader.read(path: try fixture("ucsb-buildings-osm.geojson"), category: "building")
        #expect(file.places.count == 161)
        #expect(file.warnings == ["23 feature(s) have no name; their id is used as the name"])
        let withFootprints = file.places.filter { $0.footprint != nil }
        #expect(withFootprints.count == 161)
        #expect(file.places.compactMap(\.footprint).reduce(0) { $0 + $1.polygons.reduce(0) { $0 + $1.holes.count } } == 18)
        #expect(file.places.filter { ($0.footprint?.polygons.count ?? 0) > 1 }.count == 1)
        for place in file.places {
            #expect(place.footprint?.contains(place.coordinate) == true, "\(place.id) position is outside its footprint")
        }
        let msrb = try #require(file.places.first { $0.name == "Marine Science Research Building" })
        #expect(msrb.id.rawValue == "relation/2925039")
        #expect(msrb.attributes["building"] == "university")
        #expect(msrb.aliases.contains("MSRB"))

        let temporary = TemporaryStore()
        #expect(try await temporary.store.upsert(file.places) == UpsertSummary(inserted: 161))
        let again = try PlaceFileReader.read(path: try fixture("ucsb-buildings-osm.geojson"), category: "building")
        #expect(try await temporary.store.upsert(again.places) == UpsertSummary(unchanged: 161))
        #expect(try await temporary.store.place(id: msrb.id) == msrb)
    }

    @Test("an OpenStreetMap export whose features lack a category on three of 161 takes it from their tags, amenity before building")
    func categoryFromTags() throws {
        let file = try PlaceFileReader.read(path: try fixture("ucsb-buildings-osm.geojson"))
        #expect(file.places.count == 161)
        #expect(file.warnings.contains { $0.hasPrefix("3 feature(s) have no category; it is taken from their OpenStreetMap tags") })
        func category(_ id: String) -> String? { file.places.first { $0.id.rawValue == id }?.category.rawValue }
        #expect(category("way/221411239") == "university", "building=university")
        #expect(category("way/38268884") == "building", "building=yes names the tag")
        #expect(category("way/221406716") == "police", "amenity=police wins over building=yes")
        // A feature with a category of its own keeps it, although it has OpenStreetMap tags too.
        let msrb = try #require(file.places.first { $0.id.rawValue == "relation/2925039" })
        #expect(msrb.attributes["building"] == "university")
        #expect(msrb.category.rawValue == "main_campus", "its own \"Main Campus\"")
    }

    @Test("a feature with neither a category nor an OpenStreetMap tag is still refused, and building=no is no tag")
    func noCategoryAtAll() throws {
        // Wat Pho's position from Data/bangkok-temples.csv.
        let json = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","properties":{"name":"Wat Pho","building":"no"},"geometry":{"type":"Point","coordinates":[100.492766,13.746549]}}
            ]}
            """
        #expect {
            try PlaceFileReader.read(data: Data(json.utf8), format: .geojson)
        } throws: { error in
            (error as? ImportError)?.problems.first?.message.contains("category: missing") == true
        }
    }

    @Test("the Nakhon Pathom landmarks in UTM metres without a CRS are refused as not degrees, every feature listed")
    func utmRefused() throws {
        #expect {
            try PlaceFileReader.read(path: try fixture("nakhon-pathom-landmarks-utm47n.geojson"), category: "landmark")
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            return error.summary?.contains("1043 of 1043") == true
                && error.summary?.contains("projected metres") == true
                && error.problems.count == 1043
                && error.problems[0].location == "feature 0"
        }
    }

    @Test("features without an id, without a category or with a LineString are each reported")
    func badFeatures() throws {
        // Positions of Wat Pho and Wat Arun from Data/bangkok-temples.csv.
        let json = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"th-bkk-001","properties":{"name":"Wat Pho","category":"buddhist_temple"},"geometry":{"type":"Point","coordinates":[100.492766,13.746549]}},
              {"type":"Feature","properties":{"name":"Wat Arun","category":"buddhist_temple"},"geometry":{"type":"Point","coordinates":[100.4884902150277,13.743862227153713]}},
              {"type":"Feature","id":"th-bkk-005","properties":{"name":"Wat Arun"},"geometry":{"type":"Point","coordinates":[100.4884902150277,13.743862227153713]}},
              {"type":"Feature","id":"line","properties":{"name":"Path","category":"path"},"geometry":{"type":"LineString","coordinates":[[100.492766,13.746549],[100.4884902150277,13.743862227153713]]}},
              {"type":"Feature","id":"th-bkk-001","properties":{"name":"Wat Pho","category":"buddhist_temple"},"geometry":{"type":"Point","coordinates":[100.492766,13.746549]}}
            ]}
            """
        #expect {
            try PlaceFileReader.read(data: Data(json.utf8), format: .geojson)
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            return error.problems.map(\.location) == ["feature 1", "feature 2", "feature 3", "feature 4"]
                && error.problems[0].message.contains("id")
                && error.problems[1].message.contains("category")
                && error.problems[2].message.contains("LineString")
                && error.problems[3].message.contains("repeats feature 0")
        }
    }

    @Test("a campus file becomes campuses that contain the positions inside them")
    func campusFile() throws {
        let json = """
            {"type":"Feature","id":"test-campus","properties":{"name":"Test campus"},
             "geometry":{"type":"Polygon","coordinates":[[[-118.12,33.77],[-118.10,33.77],[-118.10,33.79],[-118.12,33.79],[-118.12,33.77]]]}}
            """
        let campuses = try CampusFileReader.read(data: Data(json.utf8))
        #expect(campuses.map(\.name) == ["Test campus"])
        #expect(campuses[0].boundary.contains(try Coordinate(latitude: 33.779842, longitude: -118.112526)))
        #expect(throws: ImportError.self) {
            try CampusFileReader.read(data: Data(#"{"type":"FeatureCollection","features":[]}"#.utf8))
        }
    }
}

@Suite("Reading a CSV in pieces")
struct CSVPiecesTests {
    /// The shipped CSULB rows, each `copies` times under distinct ids, with the name quoted over two lines
    /// (a quoted comma, an escaped quote and a line break in it) and every third record ending in CRLF.
    /// Returns the text and, for each record, its byte offset and first line.
    static func awkwardFile(copies: Int) throws -> (text: String, records: [(offset: Int, line: Int)]) {
        let rows = try String(contentsOfFile: try fixture("csulb-buildings.csv"), encoding: .utf8)
            .split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        var text = "id,name,category,lat,lon\n"
        var records: [(offset: Int, line: Int)] = []
        var line = 2
        for copy in 0..<copies {
            for row in rows {
                records.append((text.utf8.count, line))
                let ending = (records.count % 3 == 0) ? "\r\n" : "\n"
                text += "\(row[0])-\(copy),\"\(row[1]), \"\"main\"\"\nbuilding\",\(row[2]),\(row[3]),\(row[4])\(ending)"
                line += 2
            }
        }
        return (text, records)
    }

    @Test("pieces are cut only where a record ends, never inside a quoted line break, and know their first line", arguments: [2, 3, 5, 8])
    func cutsBetweenRecords(count: Int) throws {
        let (text, records) = try Self.awkwardFile(copies: 3)
        let pieces = CSVRecords.split(text, into: count)
        #expect(pieces.count == count)
        #expect(pieces.map { String(text[$0.range]) }.joined() == text)
        let lineOfRecordAt = Dictionary(uniqueKeysWithValues: records.map { ($0.offset, $0.line) })
        for piece in pieces.dropFirst() {
            let offset = text.utf8.distance(from: text.startIndex, to: piece.range.lowerBound)
            let line = try #require(lineOfRecordAt[offset], "a piece starts at byte \(offset), inside a record")
            #expect(piece.firstLine == line)
        }
    }

    @Test("a file read in pieces gives the places of reading it whole, in the same order", arguments: [2, 3, 7])
    func samePlaces(count: Int) throws {
        let text = try Self.awkwardFile(copies: 20).text
        let whole = try CSVPlaces.read(Data(text.utf8), category: nil, pieces: 1).places
        #expect(whole.count == 91 * 20)
        #expect(whole.first?.name == "Anna W. Ngai Alumni Center, \"main\"\nbuilding")
        #expect(try CSVPlaces.read(Data(text.utf8), category: nil, pieces: count).places == whole)
    }

    @Test("a bad row in a later piece is reported once, with its line in the whole file")
    func problemInLaterPiece() throws {
        let file = try Self.awkwardFile(copies: 4)
        var text = file.text
        // Breaks the latitude of the last record but one, on the record's second line: "building",category,lat,lon.
        let target = file.records[file.records.count - 2]
        let start = text.utf8.index(text.startIndex, offsetBy: target.offset)
        let secondLine = try #require(text[start...].firstRange(of: "\n")?.upperBound)
        let categoryStart = try #require(text[secondLine...].firstRange(of: ",")?.upperBound)
        let fields = text[categoryStart...].split(separator: ",", maxSplits: 2)
        text.replaceSubrange(categoryStart..<text.index(categoryStart, offsetBy: fields[0].count + 1 + fields[1].count),
                             with: "\(fields[0]),north")
        #expect {
            try CSVPlaces.read(Data(text.utf8), category: nil, pieces: 4)
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            return error.problems.map(\.location) == ["line \(target.line)"] && error.problems[0].message.contains("lat")
        }
    }
}

import GeoCore
import VicinityCore

extension Place: SQLRecord {
    public static let schema = RecordSchema<Place>(
        "place", key: ["id"], point: PointColumns(latitude: "lat", longitude: "lon"),
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("name", .text) { .text($0.name) },
            SQLField("category", .text) { .text($0.category.rawValue) },
            SQLField("aliases", .json(postgresType: "jsonb")) { .text(StoredJSON.texts($0.aliases)) },
            SQLField("attributes", .json(postgresType: "jsonb")) { .text(StoredJSON.attributes($0.attributes)) },
            SQLField("search_text", .text, .rule(version: NameMatch.ruleVersion)) { .text(searchText($0)) },
            SQLField("lat", .real) { .real($0.coordinate.latitude) },
            SQLField("lon", .real) { .real($0.coordinate.longitude) },
            SQLField("footprint", .multiPolygon) { .optionalBytes($0.footprint.map(WKB.encode)) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id")
        let aliases = try StoredJSON.texts(try row.text("aliases"), of: "the aliases of place \(id)")
        let attributes = try StoredJSON.attributes(try row.text("attributes"), of: "the attributes of place \(id)")
        let footprint = try row.optionalBytes("footprint").map { bytes throws(StoreError) in
            try WKB.decodeStored(bytes, of: "place \(id)")
        }
        let name = try row.text("name"), category = try row.text("category")
        let latitude = try row.real("lat"), longitude = try row.real("lon")
        self = try readingStored("place \(id)") {
            try Place(
                id: PlaceID(id), name: name, category: Category(category), aliases: aliases, attributes: attributes,
                coordinate: Coordinate(latitude: latitude, longitude: longitude), footprint: footprint)
        }
    }

    /// Name and aliases folded the way `NameMatch` compares, one per line (a folded name holds no line break):
    /// what the trigram indexes read, and what search ranks without loading whole places.
    public static func searchText(_ place: Place) -> String {
        NameMatch.foldedNames(of: place).joined(separator: "\n")
    }
}

extension Campus: SQLRecord {
    public static let schema = RecordSchema<Campus>(
        "campus", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("name", .text) { .text($0.name) },
            SQLField("boundary", .multiPolygon) { .bytes(WKB.encode($0.boundary)) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id"), name = try row.text("name")
        let boundary = try WKB.decodeStored(try row.bytes("boundary"), of: "campus \(id)")
        self = try readingStored("campus \(id)") { try Campus(id: try PlaceID(id), name: name, boundary: boundary) }
    }
}

import GeoCore
import VicinityCore

extension SharedPosition: SQLRecord {
    public static let schema = RecordSchema<SharedPosition>(
        "user_position", key: ["account_id"], point: PointColumns(latitude: "lat", longitude: "lon"), followed: true,
        fields: [
            SQLField("account_id", .text) { .text($0.userID.rawValue) },
            SQLField("lat", .real) { .real($0.coordinate.latitude) },
            SQLField("lon", .real) { .real($0.coordinate.longitude) },
            SQLField("accuracy_m", .real) { .optionalReal($0.accuracy?.distance.meters) },
            SQLField("status", .text) { .optionalText($0.status?.rawValue) },
            SQLField("label", .text) { .text($0.label) },
            SQLField("on_campus", .boolean) { .optionalBool($0.onCampus) },
            SQLField("closest_place_id", .text) { .optionalText($0.closestPlace?.rawValue) },
            SQLField("updated_at", .integer) { .time($0.updatedAt) },
            SQLField("area_since", .integer) { .time($0.areaSince) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("account_id")
        let latitude = try row.real("lat"), longitude = try row.real("lon"), accuracy = try row.optionalReal("accuracy_m")
        let status = try row.optionalText("status"), label = try row.text("label"), onCampus = try row.optionalBool("on_campus")
        let closest = try row.optionalText("closest_place_id"), updatedAt = try row.time("updated_at")
        let areaSince = try row.time("area_since")
        self = try readingStored("the position of \(id)") {
            SharedPosition(
                userID: try UserID.stored(id), coordinate: try Coordinate(latitude: latitude, longitude: longitude),
                accuracy: try accuracy.map { try Accuracy(meters: $0) }, status: try status.flatMap { try StatusText($0) },
                label: label, onCampus: onCampus, closestPlace: try closest.map { try PlaceID($0) }, updatedAt: updatedAt,
                areaSince: areaSince)
        }
    }
}

import GeoCore
import VicinityCore

extension WatchPermission: SQLRecord {
    public static let schema = RecordSchema<WatchPermission>(
        "watch_permission", key: ["person_id", "watcher_id"],
        fields: [
            SQLField("person_id", .text) { .text($0.person.rawValue) },
            SQLField("watcher_id", .text) { .text($0.watcher.rawValue) },
            SQLField("since", .integer) { .time($0.since) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            person: try UserID.stored(try row.text("person_id")), watcher: try UserID.stored(try row.text("watcher_id")),
            since: try row.time("since"))
    }
}

extension Alert: SQLRecord {
    /// The target in three columns: its kind, the place or campus id, and the point; the schema's CHECK keeps
    /// each kind to its own columns.
    public static let schema = RecordSchema<Alert>(
        "friend_alert", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("watcher_id", .text) { .text($0.watcher.rawValue) },
            SQLField("watched_id", .text) { .text($0.watched.rawValue) },
            SQLField("target", .text) { .text($0.target.kindName) },
            SQLField("place_id", .text) { .optionalText($0.target.placeID?.rawValue) },
            SQLField("lat", .real) { .optionalReal($0.target.point?.latitude) },
            SQLField("lon", .real) { .optionalReal($0.target.point?.longitude) },
            SQLField("radius_m", .real) { .real($0.radius.distance.meters) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
            SQLField("inside", .boolean) { .optionalBool($0.inside) },
            SQLField("told_at", .integer) { .optionalTime($0.toldAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let idText = try row.text("id"), id = try AlertID.stored(idText)
        let kind = try row.text("target"), placeText = try row.optionalText("place_id")
        let latitude = try row.optionalReal("lat"), longitude = try row.optionalReal("lon")
        let target: AlertTarget
        do {
            switch (kind, placeText, latitude, longitude) {
            case ("place", let place?, nil, nil): target = .place(try PlaceID(place))
            case ("campus", let campus?, nil, nil): target = .campus(try PlaceID(campus))
            case ("point", nil, let latitude?, let longitude?): target = .point(try Coordinate(latitude: latitude, longitude: longitude))
            case ("nearby", nil, nil, nil): target = .nearby
            default: throw StoreError.corrupt("alert \(idText) has the target \(kind) with the wrong columns")
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corrupt("alert \(idText) has a target that is no place or point: \(error)")
        }
        let meters = try row.real("radius_m")
        let radius: AlertRadius
        if case .campus = target {
            radius = .boundary
        } else {
            do { radius = try AlertRadius(meters: meters) } catch { throw .corrupt("alert \(idText) has the radius \(meters) m") }
        }
        self.init(
            id: id, watcher: try UserID.stored(try row.text("watcher_id")), watched: try UserID.stored(try row.text("watched_id")),
            target: target, radius: radius,
            createdAt: try row.time("created_at"), inside: try row.optionalBool("inside"), toldAt: try row.optionalTime("told_at"))
    }
}

import Foundation
import GeoCore
import VicinityCore

/// One feature copied verbatim from ucsb-buildings-osm.geojson, the import tests' fixture (OpenStreetMap, ODbL;
/// provenance in Data/README.md): a building with a footprint and an id that holds a slash.
let pavilionGymFeature = """
    {"type": "Feature", "properties": {"category": "Main Campus", "details": "Athletics Facility", "@id": "way/32274168", "building": "yes", "leisure": "sports_centre", "name": "UCSB Pavillion Gym", "website": "recreation.sa.ucsb.edu/facilities", "image": "https://s3-media1.fl.yelpcdn.com/bphoto/Rsh9KPSQ1Z78wxIb8jhmvw/o.jpg"}, "geometry": {"type": "Polygon", "coordinates": [[[-119.8491453, 34.4192433], [-119.8491476, 34.4189299], [-119.8487303, 34.4189279], [-119.848728, 34.4192412], [-119.8491453, 34.4192433]]]}, "id": "way/32274168"}
    """

enum Footprints {
    struct NotAPolygon: Error {}

    static func pavilionGym() throws -> (place: Place, outline: MultiPolygon) {
        let feature = try JSONDecoder().decode(GeoJSONFeature.self, from: Data(pavilionGymFeature.utf8))
        guard case .polygon(let polygon) = feature.geometry else { throw NotAPolygon() }
        let outline = MultiPolygon(polygon)
        let place = try Place(
            id: PlaceID(feature.id ?? ""),
            name: feature.properties["name"]?.text ?? "",
            category: VicinityCore.Category(feature.properties["details"]?.text ?? ""),
            coordinate: outline.representativePoint,
            footprint: outline
        )
        return (place, outline)
    }
}

import GeoCore

/// Place reads a store answers from memory, without waiting: what lets the HTTP front answer them on the
/// connection's event loop. `IndexedPlaces` answers them from its grid; its `PlaceStore` reads are these.
public protocol HeldPlaceReads: Sendable {
    func nearbyPageNow(_ query: NearbyQuery) -> NearbyPage
    func closestNow(to centre: Coordinate, categories: Set<Category>) -> PlaceHit?
}

/// Campus reads a store answers from memory, without waiting (`IndexedCampuses`).
public protocol HeldCampusReads: Sendable {
    func campusesNow(containing point: Coordinate) -> [Campus]
    func campusCountNow() -> Int
}

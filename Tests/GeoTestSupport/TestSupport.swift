import Foundation
import GeoCore

/// Helpers shared by the test targets: seeded randomness and points at known distances.

/// A small, seeded generator (SplitMix64) so that every "random" case is the same on every run.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The point reached by travelling `distance` along a great circle from `start` at `bearing` degrees:
/// the direct problem on the sphere, used to place test points at known distances.
public func destination(from start: Coordinate, distance: Double, bearing: Double, radius: Double = Earth.meanRadius.meters) -> Coordinate {
    let delta = distance / radius
    let theta = bearing * .pi / 180
    let phi1 = start.latitude * .pi / 180
    let lambda1 = start.longitude * .pi / 180
    let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
    let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
    var longitude = (lambda2 * 180 / .pi).truncatingRemainder(dividingBy: 360)
    if longitude > 180 { longitude -= 360 }
    if longitude < -180 { longitude += 360 }
    let latitude = min(90, max(-90, phi2 * 180 / .pi))
    return coordinate(latitude, longitude)
}

public func coordinate(_ latitude: Double, _ longitude: Double) -> Coordinate {
    do { return try Coordinate(latitude: latitude, longitude: longitude) } catch {
        preconditionFailure("test coordinate out of range: \(error)")
    }
}

/// A random coordinate: anywhere, within 1 km of the antimeridian, or within 1 km of a pole.
public func randomCentre(using generator: inout SeededGenerator, kind: Int) -> Coordinate {
    switch kind % 4 {
    case 0:
        return coordinate(Double.random(in: -90...90, using: &generator), Double.random(in: -180...180, using: &generator))
    case 1:
        let side: Double = Bool.random(using: &generator) ? 180 : -180
        let start = coordinate(Double.random(in: -80...80, using: &generator), side)
        return destination(from: start, distance: Double.random(in: 0...1000, using: &generator),
                           bearing: Double.random(in: 0..<360, using: &generator))
    case 2:
        return destination(from: coordinate(90, 0), distance: Double.random(in: 0...1000, using: &generator),
                           bearing: Double.random(in: 0..<360, using: &generator))
    default:
        return destination(from: coordinate(-90, 0), distance: Double.random(in: 0...1000, using: &generator),
                           bearing: Double.random(in: 0..<360, using: &generator))
    }
}

import Testing

@testable import SmartStackServer

extension DonationKeyFilter {
    func mayContain(app: String, id: String) -> Bool { mayContain(Self.probe(app: app, id: id)) }
}

/// The Bloom filter of donation ids: "no" is certain, "maybe" is rare, and a key's bits lie in one cache line.
@Suite("Donation key filter")
struct DonationKeyFilterTests {
    @Test("every inserted key is found; keys of another app or id are mostly not")
    func noFalseNo() {
        var filter = DonationKeyFilter()
        for index in 0..<20_000 { filter.insert(app: "org.ex.app\(index % 7)", id: "d\(index)") }
        for index in 0..<20_000 { #expect(filter.mayContain(app: "org.ex.app\(index % 7)", id: "d\(index)")) }
        // At 20,000 keys a false "maybe" is about one in 10^6: none of these should be one.
        let strangers = (0..<20_000).filter { filter.mayContain(app: "org.ex.other", id: "d\($0)") }
        #expect(strangers.count <= 2)
    }

    @Test("at 1,000,000 keys about one new id in 210 is a false maybe (the documented rate)")
    func falseMaybeRate() {
        var filter = DonationKeyFilter()
        for index in 0..<1_000_000 { filter.insert(app: "org.ex.app\(index % 10)", id: "k\(index)") }
        let tried = 200_000
        let maybes = (0..<tried).reduce(0) { count, index in
            count + (filter.mayContain(app: "org.ex.app\(index % 10)", id: "new\(index)") ? 1 : 0)
        }
        // Expected 200,000 / 212 ≈ 943 (binomial, σ ≈ 31): far from both 0 (a filter that says "no" to everything
        // new would be wrong) and from several times the rate (a broken block choice).
        #expect(maybes > 700 && maybes < 1_200, "false maybes: \(maybes) of \(tried)")
    }

    @Test("a key's three bits lie in one 64-byte block inside the table")
    func oneBlock() {
        for index in 0..<10_000 {
            let probe = DonationKeyFilter.probe(app: "org.ex.app", id: "id\(index)")
            #expect(probe.base % (DonationKeyFilter.blockBits / 64) == 0)
            #expect(probe.base >= 0 && probe.base + DonationKeyFilter.blockBits / 64 <= DonationKeyFilter.bitCount / 64)
            for bit in [probe.bits.0, probe.bits.1, probe.bits.2] {
                #expect(bit >= 0 && bit < DonationKeyFilter.blockBits)
            }
        }
    }

    @Test("a union holds the keys of both filters (the filter filled off the loop joins the loop's)")
    func union() {
        var loop = DonationKeyFilter()
        var filled = DonationKeyFilter()
        loop.insert(app: "org.ex.a", id: "live")
        filled.insert(app: "org.ex.a", id: "stored")
        #expect(!loop.mayContain(app: "org.ex.a", id: "stored"))
        loop.formUnion(filled)
        #expect(loop.mayContain(app: "org.ex.a", id: "stored"))
        #expect(loop.mayContain(app: "org.ex.a", id: "live"))
    }

    @Test("a union with an empty filter, either way, holds the other's keys; an empty filter has none")
    func unionWithEmpty() {
        var stored = DonationKeyFilter()
        for index in 0..<1_000 { stored.insert(app: "org.ex.a", id: "s\(index)") }
        #expect(!DonationKeyFilter().mayContain(app: "org.ex.a", id: "s1"))

        var live = DonationKeyFilter()
        live.formUnion(stored)
        for index in 0..<1_000 { #expect(live.mayContain(app: "org.ex.a", id: "s\(index)")) }
        // The copy is the live filter's own: a key inserted afterwards is not in the filter it came from.
        live.insert(app: "org.ex.a", id: "after")
        #expect(live.mayContain(app: "org.ex.a", id: "after"))
        #expect(!stored.mayContain(app: "org.ex.a", id: "after"))

        var unchanged = stored
        unchanged.formUnion(DonationKeyFilter())
        for index in 0..<1_000 { #expect(unchanged.mayContain(app: "org.ex.a", id: "s\(index)")) }
        #expect(!unchanged.mayContain(app: "org.ex.a", id: "after"))
    }
}

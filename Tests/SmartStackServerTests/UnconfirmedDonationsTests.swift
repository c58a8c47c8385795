import NIOCore
import NIOPosix
import SmartStackCore
import SmartStackStore
import Testing

@testable import SmartStackServer

/// Donations logged but maybe not yet stored are found until the commit that covers them is known, in two
/// generations whose tables are reused; and the host's loop-only entry runs isolated on its loop.
@Suite("Unconfirmed donations")
struct UnconfirmedDonationsTests {
    typealias F = ServerFixture

    @Test("a donation is found until the ticket that covered its generation committed; tables are reused, bounded")
    func generations() {
        var unconfirmed = UnconfirmedDonations()
        let first = CommitWaiter()
        let time = Timestamp(microseconds: 1_000_000)
        // Generation 1 (the committed start ticket rolls it over at once): a, covered by `first` from the next add.
        unconfirmed.add(F.donation("mail", id: "a", at: time), newest: .pending(first))
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "a")) != nil)
        let second = CommitWaiter()
        unconfirmed.add(F.donation("mail", id: "b", at: time), newest: .pending(second))
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "a")) != nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "b")) != nil)
        first.resolve(nil)
        // `a`'s generation is covered by `first`: the next add starts a new one, keeping the last.
        let third = CommitWaiter()
        unconfirmed.add(F.donation("mail", id: "c", at: time), newest: .pending(third))
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "b")) != nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "c")) != nil)
        second.resolve(nil)
        third.resolve(nil)
        // A burst larger than the kept capacity in one generation, then two more generations: all of it goes.
        let burst = CommitWaiter()
        let count = UnconfirmedDonations.keptCapacity * 2
        for index in 0..<count {
            unconfirmed.add(F.donation("mail", id: "bulk\(index)", at: time), newest: .pending(burst))
        }
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "bulk0")) != nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "c")) != nil)
        burst.resolve(nil)
        unconfirmed.add(F.donation("mail", id: "d", at: time), newest: .committed)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "bulk\(count - 1)")) != nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "c")) == nil)
        unconfirmed.add(F.donation("mail", id: "e", at: time), newest: .committed)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "bulk0")) == nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "d")) != nil)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "e")) != nil)
        unconfirmed.add(F.donation("mail", id: "f", at: time), newest: .committed)
        #expect(unconfirmed.donation(DonationKey(app: F.app("mail"), id: "d")) == nil)
    }

    @Test("onLoop runs isolated to the host on its event loop")
    func onLoop() async throws {
        let host = try await F.host(apps: ["mail"])
        let stacks = try await host.eventLoop.submit { host.onLoop { $0.stacks().count } }.get()
        #expect(stacks == 1)  // the fixture's `home`
    }
}

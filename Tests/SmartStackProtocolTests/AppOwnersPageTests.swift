import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// `ListAppOwners` pages by app id: `next` names the page's last app while more follow, and passing it back as
/// `after` reads the rest; bad parameters are typed errors naming them.
@Suite("ListAppOwners pages")
struct AppOwnersPageTests {
    @Test("pages by app id until next is null; every claim once, in order")
    func pages() throws {
        let owners = try (0..<7).map { (app: try AppID("org.example.app\($0)"), uid: UInt32(1_000 + $0)) }.shuffled()
        var after: AppID?
        var listed: [String] = []
        var pages = 0
        repeat {
            let reply = ListAppOwnersRequest.reply(owners: owners, after: after, limit: 3)
            guard case .array(let page)? = reply["owners"] else { Issue.record("no owners"); return }
            listed += page.compactMap { value -> String? in
                guard case .object(let owner) = value, case .string(let app)? = owner["app"] else { return nil }
                return app
            }
            pages += 1
            switch reply["next"] {
            case .string(let next)?: after = try AppID(next)
            default: after = nil
            }
        } while after != nil && pages < 10
        #expect(pages == 3)
        #expect(listed == (0..<7).map { "org.example.app\($0)" })
        // A page that ends exactly at the last claim says no more follow.
        let last = ListAppOwnersRequest.reply(owners: owners, after: try AppID("org.example.app3"), limit: 3)
        #expect(last["next"] == .null)
    }

    @Test("a typed request is read back as sent")
    func roundTrip() throws {
        let request = ListAppOwnersRequest(after: try AppID("org.example.mail"), limit: 5)
        let read = try ListAppOwnersRequest(parameters: request.wireParameters)
        #expect(read.after == request.after && read.limit == 5)
        #expect(try ListAppOwnersRequest(parameters: [:]).limit == ListAppOwnersRequest.defaultLimit)
    }

    @Test(
        "a bad after or limit is InvalidParameter naming it",
        arguments: [
            (["limit": .int(0)], "limit"), (["limit": .int(10_001)], "limit"), (["after": .string("")], "after"),
            (["after": .int(3)], "after"), (["limit": .string("5")], "limit"), (["other": .int(1)], "other"),
        ] as [(JSONObject, String)])
    func refusals(parameters: JSONObject, named: String) {
        do {
            _ = try ListAppOwnersRequest(parameters: parameters)
            Issue.record("\(parameters) was accepted")
        } catch {
            #expect(error.name == "org.varlink.service.InvalidParameter", "\(error)")
            #expect(error.parameters["parameter"] == .string(named), "\(error)")
        }
    }
}

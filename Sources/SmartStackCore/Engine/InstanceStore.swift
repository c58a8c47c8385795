/// Every placed widget, in slots with a dense index, so a stack's query reaches its widgets by the slots it
/// keeps (`StackState.slots`) without hashing their ids or copying their state.
///
/// Reads like a dictionary by id for everything else. A removed widget's slot is reused by the next one placed.
struct InstanceStore: Sendable {
    /// The widgets by slot; `nil` for a free slot.
    var slots: [InstanceState?] = []
    /// By slot: whether the widget has a timeline or relevant contexts. A query reads nothing else of a widget
    /// without them (its relevance is none), so it need not touch the widget's state at all.
    var hasRelevanceInputs: [Bool] = []
    var slotsByID: [InstanceID: Int32] = [:]
    var freeSlots: [Int32] = []

    /// Widgets placed.
    var count: Int { slotsByID.count }

    /// The ids of every placed widget (unordered).
    var ids: Dictionary<InstanceID, Int32>.Keys { slotsByID.keys }

    /// Every placed widget (in slot order).
    var values: [InstanceState] { slots.compactMap { $0 } }

    /// The slot of a placed widget.
    func slot(of id: InstanceID) -> Int32? { slotsByID[id] }

    /// The widget in `slot`, `nil` for a free or unknown slot.
    @inline(__always)
    subscript(slot slot: Int32) -> InstanceState? {
        slot >= 0 && Int(slot) < slots.count ? slots[Int(slot)] : nil
    }

    /// The widget placed under `id`. Setting a widget places it (in a free slot when new); setting `nil` removes it.
    subscript(id: InstanceID) -> InstanceState? {
        get { slotsByID[id].flatMap { slots[Int($0)] } }
        _modify {
            if let slot = slotsByID[id] {
                // Mutated where it lies, so changing one field copies nothing else.
                yield &slots[Int(slot)]
                if slots[Int(slot)] == nil {
                    slotsByID[id] = nil
                    freeSlots.append(slot)
                }
                noteRelevanceInputs(of: slot)
            } else {
                var added: InstanceState?
                yield &added
                if let added { place(added, as: id) }
            }
        }
    }

    /// Removes and returns the widget placed under `id`.
    @discardableResult
    mutating func removeValue(forKey id: InstanceID) -> InstanceState? {
        guard let slot = slotsByID.removeValue(forKey: id) else { return nil }
        let state = slots[Int(slot)]
        slots[Int(slot)] = nil
        hasRelevanceInputs[Int(slot)] = false
        freeSlots.append(slot)
        return state
    }

    private mutating func place(_ state: InstanceState, as id: InstanceID) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            slots[Int(slot)] = state
        } else {
            slot = Int32(slots.count)
            slots.append(state)
            hasRelevanceInputs.append(false)
        }
        slotsByID[id] = slot
        noteRelevanceInputs(of: slot)
    }

    private mutating func noteRelevanceInputs(of slot: Int32) {
        hasRelevanceInputs[Int(slot)] =
            slots[Int(slot)].map { $0.relevance.timeline != nil || !$0.relevantContexts.isEmpty } ?? false
    }
}

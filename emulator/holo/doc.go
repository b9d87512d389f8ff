// Package holo is the electroholographic switch model of Er-El and Feitelson, "Communication
// Models for a Free-Space Optical Cross-Connect Switch" (§2.2–§3.3), made executable: a second
// kind of fabric next to the Beneš network, with the broadcast algorithms of the paper run on it
// as event schedules and set against their closed forms.
//
// # The fabric (§2.2, §2.3)
//
// N nodes, each with one transmit and one receive link into a switch of KLTN crystals. The switch
// state is a configuration vector C = (a_1, ..., a_N): whatever node i transmits goes to node a_i;
// with multicast size m > 1 (Params.Multicast) a_i is a vector of up to m distinct nodes, all
// reached by one transmission (the broadcast algorithms use m = 1, as §3 does). A node changes its
// own entry with CSet(i, k). Every link starts dark (pointing nowhere), so each algorithm pays
// for every configuration it uses.
//
// A configuration change costs T_c = T_r + T_w (§2.3.3): the request (T_r) goes over the
// control network to the control station, which serves requests one at a time in order of
// arrival; then the switch settles and the receiver synchronises (T_w), and those waits overlap
// between nodes, so k simultaneous changes take k·T_r + T_w. A link is unusable from its request
// until it has settled; a node that wants to transmit on it waits (its FU holds the packet in
// its outgoing buffer).
//
// # Costs and the forwarding unit (§2.3.2, §2.4)
//
// T_b is the time per byte through the software stack onto the wire, T_f the time per byte through
// the hardware forwarding unit (FU), T_d = T_b − T_f, S the message size. In this model:
//
//   - a send from the application occupies the sender's link for S·T_b (stack and wire);
//   - a forward by the FU occupies it for S·T_f (store and forward: the FU takes the whole packet
//     into its outgoing buffer first);
//   - a packet with the broadcast bit (deliver and forward) is taken whole into the FU, which at
//     the same time passes it up the stack (in the application S·T_d after it arrived: the ring's
//     2·S·T_d) and, while its TTL is above zero after the decrement, forwards it on the node's
//     link; the FU retains the last packet it handled, so software can forward it again after a
//     CSet without pushing the message down the stack (§2.4);
//   - a packet without the broadcast bit is for the node where its TTL runs out: before that an
//     FU forwards it without delivering it (forward only); there it is passed straight to the NIC
//     as it arrives (deliver only), so its trip up the receiver's stack overlaps the sender's
//     trip down and it is in the application S·T_b after its first byte arrived (the naive
//     algorithm's (N−1)(T_c + S·T_b) charges no reception);
//   - software learns of a packet when its header has crossed the stack: H·T_d after arrival,
//     with header size H (default 1 byte). §2.4 says only the header goes up to trigger the next
//     configuration change; this is the reading of the per-stage T_d without S in the tree forms;
//   - the FU has priority over the NIC for the link: a forward waiting in the FU goes before an
//     application send waiting in the NIC.
//
// The simulator asserts what a broadcast must satisfy: every node receives the message exactly
// once (a second arrival is ErrDuplicate, a node never reached is ErrUnreached), no two
// transmissions reach one receiver at once (ErrCollision: garbled data, §2.2, reported and never
// merged), and nobody transmits on a dark link (ErrDarkLink).
//
// # The algorithms (§3.1) and their analysis (§3.2, §3.3)
//
// Naive (N−1 CSets and sends from node 0), ring (one round of CSets to i+1, then FU forwarding with
// TTL N−1), tree (lg N stages of CSet and forward), tree embedded in a ring (forward k nodes along
// the ring while the end node changes its link into the middle of its fragment, with k =
// (H·T_d + T_c)/(S·T_f) + 1), and its alternating refinement (every node that has the message
// branches into the unreached part in every stage: e(i) = 2e(i−1) + o(i−1), o(i) = k·e(i−1) +
// o(i−1)). Each is a Plan: the CSets made at t = 0 and each node's sends, with the TTLs that stop
// every ring chain just before the next branch target. Run executes a Plan on the fabric.
//
// ClosedForm gives the paper's running times; ModelForm the exact running time of this model
// where one exists (naive, ring: the paper's; tree: the paper's minus one H·T_d, because the
// first stage's sender holds the message and lifts no header). Crossovers and T_c^0.5 (the
// configuration time at which a broadcast takes twice its T_c = 0 time, §3.3) come from both the
// closed forms and the simulator.
package holo

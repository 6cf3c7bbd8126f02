// Global layout and algorithm selection (docs/design.md, Layout planning): picks one candidate per
// node so that the sum of node costs and edge costs is least. A pure function of its input: no
// global state, no timing, safe to call from any thread.
//
// Problem. Node v has candidates 0..k_v-1 (k_v >= 1); candidate i costs `costs[i]`. An edge
// (from, to) holds a k_from x k_to matrix whose entry (i, j) is paid when `from` takes i and `to`
// takes j. In layout planning a node is a layout-sensitive op, a candidate an (algorithm, layout)
// pair costed by the tuner (forward plus backward times when training), and an edge entry the
// measured time of transforming the tensor from i's layout to j's (0 when they are equal).
// Costs are finite or +infinity ("not allowed"); NaN and -infinity are refused. Several edges
// between one pair of nodes are summed; a self-loop is refused. The solver never subtracts
// costs, so +infinity never turns into NaN.
//
// Method. PBQP reductions (Scholz & Eckstein 2002; Hames & Scholz 2006), always on a live node
// of least degree:
//   R0   degree 0: the node takes its cheapest candidate.
//   RI   degree 1: for each candidate of the neighbour, the node's cheapest answer to it is added
//        to the neighbour's cost vector.
//   RII  degree 2: for each pair of candidates of the two neighbours, the node's cheapest answer
//        becomes an edge between them (added to the edge already there, if any).
//   RN   only when every live node has degree >= 3: the node of largest degree takes the
//        candidate that is cheapest given its neighbours' current cost vectors, and its row of
//        each edge is added to that neighbour's vector. A heuristic.
// Choices are then recovered in reverse elimination order, each node taking its cheapest answer
// to the neighbours chosen after it. Before reducing, an edge whose end has a single candidate is
// added to the other end's vector (exact; it lowers degrees so fewer RN steps are needed).
// On a chain, tree or forest only R0 and RI ever apply, which is exactly dynamic programming by
// leaf elimination; graphs of treewidth <= 2 (series-parallel: residual blocks, inception
// modules) always have a node of degree <= 2, so R0/RI/RII solve them exactly too. After an RN
// step the assignment is polished by single-node moves that each strictly lower the total.
//
// Optimality. `proven_optimal` is true iff no RN step was taken; then `total_cost` is the minimum
// over all assignments. Otherwise the assignment is a good one, not necessarily the best.
//
// No finite solution. Not an exception: the solution is returned with total_cost = +infinity,
// feasible = false, and `infeasibility` saying why: the first node whose every candidate had
// become infinite during the reductions, and one forbidden term of the returned assignment. With
// proven_optimal it is proven that every assignment costs +infinity; after RN it is not (a finite
// assignment may exist that the heuristic missed).
//
// Errors. A malformed problem (no candidates, index out of range, self-loop, matrix size not
// k_from x k_to, NaN or -infinity) throws mxlite::Error naming the node or edge.
//
// Complexity. With n nodes, E edges and at most k candidates per node: time
// O((n + E)·(log n + k²) + n·k³) when no RN step is needed (an RII costs k³); an RN step on a
// node of degree d costs d·k², and polishing after it O(passes·(n + E)·k). Memory O((n + E)·k²):
// RII adds at most one edge per elimination.
#pragma once

#include <string>
#include <vector>

namespace mxlite {

// A dense row-major matrix of costs.
class CostMatrix {
 public:
  CostMatrix() = default;
  CostMatrix(int rows, int cols, double fill = 0.0);
  // Rows of equal length; ragged rows throw mxlite::Error.
  static CostMatrix FromRows(const std::vector<std::vector<double>>& rows);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double at(int row, int col) const { return values_[static_cast<size_t>(row) * cols_ + col]; }
  double& at(int row, int col) { return values_[static_cast<size_t>(row) * cols_ + col]; }
  CostMatrix Transposed() const;

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::vector<double> values_;
};

struct LayoutProblem {
  struct Node {
    std::string name;           // for messages only; may be empty
    std::vector<double> costs;  // one per candidate
  };
  struct Edge {
    int from = 0;
    int to = 0;
    CostMatrix costs;  // [candidates of from] x [candidates of to]
  };

  std::vector<Node> nodes;
  std::vector<Edge> edges;

  // Returns the new node's index. Nothing is checked until the problem is solved.
  int AddNode(std::string name, std::vector<double> costs);
  void AddEdge(int from, int to, CostMatrix costs);
  void AddEdge(int from, int to, const std::vector<std::vector<double>>& rows);
};

// How many times each step was applied, for the planning report.
struct ReductionCounts {
  int r0 = 0;
  int r1 = 0;
  int r2 = 0;
  int rn = 0;
  int single_candidate_edges = 0;  // edges folded into a vector before reducing
  int polish_moves = 0;            // single-node improvements after RN

  std::string ToString() const;  // "R0 1, RI 4, RII 2, RN 0, ..."
};

struct LayoutSolution {
  std::vector<int> choice;  // per node: the chosen candidate
  double total_cost = 0.0;  // node costs plus edge costs of `choice`
  bool proven_optimal = true;
  bool feasible = true;       // total_cost is finite
  std::string infeasibility;  // why not, when !feasible
  ReductionCounts reductions;
};

// Throws mxlite::Error naming the first malformed node or edge.
void ValidateLayoutProblem(const LayoutProblem& problem);

// The global choice: minimal total cost (see the contract above).
LayoutSolution SolveLayoutProblem(const LayoutProblem& problem);

// The local choice of MXNet or PyTorch: every node takes its own cheapest candidate (lowest index
// on ties), and the edges are then paid for. proven_optimal is false unless there are no edges.
LayoutSolution LocalLayoutSolution(const LayoutProblem& problem);

// Node costs plus edge costs of one assignment; `choice` must hold a valid index per node.
double AssignmentCost(const LayoutProblem& problem, const std::vector<int>& choice);

}  // namespace mxlite

// Analyses are computed once per model and cached, MLIR-style: a rule asks
// `ctx.get<VerifierReport>()` and gets the shared result. An analysis type
// provides a constructor `A(const Model &, AnalysisContext &)`.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/base/Setup.h"

#include <memory>
#include <typeindex>
#include <unordered_map>

namespace graphlint {

class AnalysisContext {
public:
  AnalysisContext(const Model &m, const Setup &s) : model_(m), setup_(s) {}
  const Model &model() const { return model_; }
  const Setup &setup() const { return setup_; }

  template <typename A> const A &get() {
    auto key = std::type_index(typeid(A));
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      auto holder = std::make_shared<Holder<A>>(model_, *this);
      it = cache_.emplace(key, holder).first;
    }
    return static_cast<Holder<A> &>(*it->second).value;
  }

private:
  struct HolderBase { virtual ~HolderBase() = default; };
  template <typename A> struct Holder : HolderBase {
    Holder(const Model &m, AnalysisContext &c) : value(m, c) {}
    A value;
  };
  const Model &model_;
  const Setup &setup_;
  std::unordered_map<std::type_index, std::shared_ptr<HolderBase>> cache_;
};

}  // namespace graphlint

// Analyses are computed once per model and cached, MLIR-style: a rule asks
// `ctx.get<VerifierReport>()` and gets the shared result. An analysis type
// provides a constructor `A(const Model &, AnalysisContext &)`.
//
// Contexts over one model may also share what does not depend on the whole
// setup (SharedFacts): `graphlint plan` evaluates a thousand setups of one
// model, and the fusion plan of a backend, the repeated layers or the cost of
// each kernel on a target are the same for most of them. An analysis opts in
// with `static std::string sharedKey(const Setup &)`, which spells out every
// setup value its constructor reads (and those of the analyses it asks for);
// a derived fact goes through `ctx.fact<T>(key, make)`. Without a SharedFacts
// (every lint) each context computes its own, as before: sharing changes
// where a result is computed, never what it is.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/base/Setup.h"
#include "graphlint/ir/PhaseTimes.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/TypeName.h>

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <typeindex>
#include <unordered_map>
#include <utility>

namespace graphlint {

namespace detail {
template <typename A, typename = void> struct HasSharedKey : std::false_type {};
template <typename A>
struct HasSharedKey<A, std::void_t<decltype(A::sharedKey(std::declval<const Setup &>()))>> : std::true_type {};
}  // namespace detail

/// What the contexts over one model share: each fact (an analysis under its
/// sharedKey, or a value under its key) is computed once, by the first
/// context that asks, and read by every other. Thread-safe: contexts on
/// several threads may ask at once (one computes, the others wait for that
/// fact only). A shared result never refers to the context that computed it.
class SharedFacts {
public:
  template <typename T, typename Make> const T &get(const std::string &key, Make &&make) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::shared_ptr<Entry> &slot = entries_[key];
      if (!slot)
        slot = std::make_shared<Entry>();
      e = slot;
    }
    std::call_once(e->once, [&] {
      e->value = std::shared_ptr<void>(new T(make()), [](void *p) { delete static_cast<T *>(p); });
    });
    return *static_cast<const T *>(e->value.get());
  }

private:
  struct Entry {
    std::once_flag once;
    std::shared_ptr<void> value;
  };
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
};

class AnalysisContext {
public:
  AnalysisContext(const Model &m, const Setup &s, SharedFacts *shared = nullptr)
      : model_(m), setup_(s), shared_(shared) {}
  const Model &model() const { return model_; }
  const Setup &setup() const { return setup_; }

  template <typename A> const A &get() {
    if constexpr (detail::HasSharedKey<A>::value) {
      return fact<A>(A::sharedKey(setup_), [&] {
        PhaseTimes::Scope phase("analysis ", timingName<A>(), timingItems());
        return A(model_, *this);
      });
    } else {
      auto key = std::type_index(typeid(A));
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        PhaseTimes::Scope phase("analysis ", timingName<A>(), timingItems());
        auto holder = std::make_shared<Holder<A>>(model_, *this);
        it = cache_.emplace(key, holder).first;
      }
      return static_cast<Holder<A> &>(*it->second).value;
    }
  }

  /// A value derived from the model and the setup values `key` names (and
  /// nothing else): `make()` runs once per context, or once per SharedFacts
  /// when the context has one.
  template <typename T, typename Make> const T &fact(llvm::StringRef key, Make &&make) {
    std::string full = std::string(typeid(T).name()) + '\0' + key.str();
    if (shared_)
      return shared_->get<T>(full, make);
    return local_.get<T>(full, make);
  }

private:
  // "FusionPlan" for --timings (PhaseTimes.h).
  template <typename A> static llvm::StringRef timingName() {
    llvm::StringRef n = llvm::getTypeName<A>();
    n.consume_front("graphlint::");
    return n;
  }
  uint64_t timingItems() const { return model_.graph ? model_.graph->nodes().size() : 0; }

  struct HolderBase { virtual ~HolderBase() = default; };
  template <typename A> struct Holder : HolderBase {
    Holder(const Model &m, AnalysisContext &c) : value(m, c) {}
    A value;
  };
  const Model &model_;
  const Setup &setup_;
  SharedFacts *shared_ = nullptr;
  SharedFacts local_;
  std::unordered_map<std::type_index, std::shared_ptr<HolderBase>> cache_;
};

}  // namespace graphlint

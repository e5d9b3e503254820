// graphlint rules [--format text|json]: the rule catalogue.
// graphlint rule CODE|NAME: one rule's documentation.
#include "Command.h"

#include "graphlint/rules/Rule.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <fmt/format.h>

namespace graphlint::cli {

namespace {

class Rules : public Command {
public:
  Rules() : Command("rules", "[--format text|json]", "list every rule", "RULES OPTIONS") {}

  int run() override {
    if (format_ == "json") {
      llvm::json::Array arr;
      for (const Rule *r : allRules()) {
        const RuleInfo &i = r->info();
        arr.push_back(llvm::json::Object{{"code", std::string(i.code)},
                                         {"name", std::string(i.name)},
                                         {"severity", std::string(severityName(i.severity))},
                                         {"summary", std::string(i.summary)}});
      }
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(arr))) << "\n";
      return 0;
    }
    if (format_ != "text")
      return usage("rules: --format must be text or json");
    for (const Rule *r : allRules()) {
      const RuleInfo &i = r->info();
      llvm::outs() << fmt::format("{}  {:<26} {:<8} {}\n", i.code, i.name, severityName(i.severity), i.summary);
    }
    return 0;
  }

private:
  cl::opt<std::string> &format_ =
      add<cl::opt<std::string>>({nullptr, nullptr, "", "text|json", "a table (default) or a JSON array"}, "format",
                                cl::init("text"));
};

class RuleDoc : public Command {
public:
  RuleDoc() : Command("rule", "CODE|NAME", "print a rule's documentation", "RULE OPTIONS") {}

  std::string takes() const override { return "it takes one CODE or NAME and no options"; }

  int run() override {
    if (args_.size() != 1)
      return usage("rule expects one CODE or NAME, e.g. 'graphlint rule GL001'");
    const Rule *r = findRule(args_[0]);
    if (!r)
      return usage("no rule named '" + args_[0] + "' (see 'graphlint rules')");
    std::string_view doc = ruleDoc(r->info().code);
    if (doc.empty())
      llvm::outs() << r->info().code << " " << r->info().name << ": " << r->info().summary << "\n";
    else
      llvm::outs() << doc;
    return 0;
  }

private:
  cl::list<std::string> &args_ = positional("CODE|NAME");
};

}  // namespace

Command &rulesCommand() {
  static Rules c;
  return c;
}

Command &ruleCommand() {
  static RuleDoc c;
  return c;
}

}  // namespace graphlint::cli

package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.GcRule;
import com.google.protobuf.Duration;
import io.tabula.persistence.schema.GcPolicy;
import java.util.ArrayList;
import java.util.List;

/** Cloud Bigtable GC rules to the engine's {@link GcPolicy} and back. */
final class GcRules {
  private GcRules() {}

  static GcPolicy toPolicy(String field, GcRule rule) {
    return switch (rule.getRuleCase()) {
      case RULE_NOT_SET -> GcPolicy.KEEP_ALL;
      case MAX_NUM_VERSIONS -> {
        if (rule.getMaxNumVersions() < 1) {
          throw GrpcErrors.invalid(field + ".max_num_versions", "must be at least 1, was " + rule.getMaxNumVersions());
        }
        yield GcPolicy.maxVersions(rule.getMaxNumVersions());
      }
      case MAX_AGE -> {
        Duration d = rule.getMaxAge();
        long micros = d.getSeconds() * 1_000_000L + d.getNanos() / 1000;
        if (micros <= 0 || d.getSeconds() < 0 || d.getNanos() < 0) {
          throw GrpcErrors.invalid(field + ".max_age", "must be a positive duration");
        }
        yield GcPolicy.maxAgeMicros(micros);
      }
      case INTERSECTION -> {
        List<GcPolicy> rs = list(field + ".intersection.rules", rule.getIntersection().getRulesList());
        if (rs.isEmpty()) {
          throw GrpcErrors.invalid(field + ".intersection.rules", "must not be empty");
        }
        yield new GcPolicy.Intersection(rs);
      }
      case UNION -> new GcPolicy.Union(list(field + ".union.rules", rule.getUnion().getRulesList()));
    };
  }

  private static List<GcPolicy> list(String field, List<GcRule> rules) {
    List<GcPolicy> out = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      out.add(toPolicy(field + "[" + i + "]", rules.get(i)));
    }
    return out;
  }

  static GcRule toRule(GcPolicy p) {
    if (p instanceof GcPolicy.MaxVersions v) {
      return GcRule.newBuilder().setMaxNumVersions(v.n()).build();
    } else if (p instanceof GcPolicy.MaxAge a) {
      return GcRule.newBuilder().setMaxAge(Duration.newBuilder().setSeconds(a.micros() / 1_000_000)
          .setNanos((int) (a.micros() % 1_000_000) * 1000)).build();
    } else if (p instanceof GcPolicy.Union u) {
      return GcRule.newBuilder().setUnion(GcRule.Union.newBuilder()
          .addAllRules(u.rules().stream().map(GcRules::toRule).toList())).build();
    } else if (p instanceof GcPolicy.Intersection in) {
      return GcRule.newBuilder().setIntersection(GcRule.Intersection.newBuilder()
          .addAllRules(in.rules().stream().map(GcRules::toRule).toList())).build();
    }
    return GcRule.getDefaultInstance();
  }
}

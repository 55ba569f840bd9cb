// The unit tier's setup: each test file gets its own copy of process.env, so this marks only unit
// test files. test/support/infra.ts refuses to hand out a dependency's address under it, so a
// unit test that reaches for Redis, Kafka, Keycloak, stripe-mock or the kube-apiserver fails at once.
process.env.SP_TEST_TIER = 'unit';

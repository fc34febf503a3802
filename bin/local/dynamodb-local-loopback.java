// Starts DynamoDB Local listening on 127.0.0.1 only (bin/local/dynamodb-local.ts runs it).
//
// Why: the jar (3.3.0) has no bind option and `ServerRunner.main` starts Jetty on the wildcard
// address, so anyone on the network could read and write the local tables. This launcher builds
// the same server from the same command-line arguments, sets the host of Jetty's connector to
// 127.0.0.1 before start, and otherwise starts it as `ServerRunner.main` does (without its
// telemetry setup). The Jetty server is a private field of DynamoDBProxyServer, hence reflection;
// when a newer jar renames it the launcher exits saying so rather than listening everywhere.
//
// Not public, so javac accepts this kebab-case file name; run as a source file (`java --source
// 17`) or compiled once into a cache, with DynamoDBLocal.jar and DynamoDBLocal_lib/* on the class path.

import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

class DynamoDbLocalLoopback {
  static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Server server;
    try {
      Field field = DynamoDBProxyServer.class.getDeclaredField("server");
      field.setAccessible(true);
      server = (Server) field.get(proxy);
    } catch (ReflectiveOperationException | ClassCastException e) {
      System.err.println("dynamodb-local-loopback: this DynamoDB Local jar has no Jetty `server` field (" + e
          + "); update bin/local/dynamodb-local-loopback.java for it.");
      System.exit(3);
      return;
    }
    int bound = 0;
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector serverConnector) {
        serverConnector.setHost(HOST);
        bound++;
      }
    }
    if (bound == 0) {
      System.err.println("dynamodb-local-loopback: DynamoDB Local's Jetty server has no ServerConnector to bind to " + HOST
          + "; update bin/local/dynamodb-local-loopback.java for this jar.");
      System.exit(3);
    }
    proxy.start();
    proxy.join();
  }
}

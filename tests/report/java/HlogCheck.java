// The reference side of tests/report/java_compat.sh: HdrHistogram's own log reader and writer
// (Debian's libhdrhistogram-java) run against knee's interval logs.
//
//   java HlogCheck read LOG            reads every interval of LOG with HistogramLogReader, adds
//                                      them up and prints total count, max, p50, p99, p99.9
//   java HlogCheck write LOG VALUES    records VALUES (one integer per line, ns) in intervals of
//                                      1,000 values logged with HistogramLogWriter (every third
//                                      interval tagged "slow"), then prints the same five figures
//                                      of everything it recorded
//
// Figures are one per line, as HdrHistogram reports them: getTotalCount(), getMaxValue(),
// getValueAtPercentile(p).
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

public class HlogCheck {
  private static final long ONE_HOUR_NS = 3_600_000_000_000L;
  private static final int INTERVAL_VALUES = 1000;

  private static void printFigures(Histogram h) {
    System.out.println(h.getTotalCount());
    System.out.println(h.getMaxValue());
    for (double p : new double[] {50.0, 99.0, 99.9}) {
      System.out.println(h.getValueAtPercentile(p));
    }
  }

  private static void read(String log) throws Exception {
    HistogramLogReader reader = new HistogramLogReader(log);
    Histogram total = null;
    EncodableHistogram interval;
    while ((interval = reader.nextIntervalHistogram()) != null) {
      Histogram h = (Histogram) interval;
      if (total == null) {
        total = h.copy();
      } else {
        total.add(h);
      }
    }
    if (total == null) {
      throw new IllegalStateException("no interval histogram in " + log);
    }
    printFigures(total);
  }

  private static void write(String log, String values) throws Exception {
    Histogram all = new Histogram(ONE_HOUR_NS, 3);
    Histogram interval = new Histogram(ONE_HOUR_NS, 3);
    try (PrintStream out = new PrintStream(new FileOutputStream(log))) {
      HistogramLogWriter writer = new HistogramLogWriter(out);
      writer.outputComment("[Logged with HlogCheck, knee tests/report/java]");
      writer.outputLogFormatVersion();
      writer.outputStartTime(1_700_000_000_123L);
      writer.outputLegend();
      int index = 0;
      for (String line : Files.readAllLines(Paths.get(values))) {
        if (line.isBlank()) {
          continue;
        }
        long v = Long.parseLong(line.trim());
        interval.recordValue(v);
        all.recordValue(v);
        if (interval.getTotalCount() == INTERVAL_VALUES) {
          logInterval(writer, interval, index++);
        }
      }
      if (interval.getTotalCount() > 0) {
        logInterval(writer, interval, index);
      }
    }
    printFigures(all);
  }

  private static void logInterval(HistogramLogWriter writer, Histogram interval, int index) {
    interval.setTag(index % 3 == 2 ? "slow" : null);
    writer.outputIntervalHistogram(index, index + 1.0, interval);
    interval.reset();
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("read")) {
      read(args[1]);
    } else if (args.length == 3 && args[0].equals("write")) {
      write(args[1], args[2]);
    } else {
      System.err.println("usage: HlogCheck read LOG | HlogCheck write LOG VALUES");
      System.exit(2);
    }
  }
}

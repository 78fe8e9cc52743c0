package io.pier.it.console;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * Headless Chromium driven through chromedriver, both from the system (Debian's {@code chromium}
 * and {@code chromium-driver}, which {@code .ci/run} installs; {@code PIER_CHROMIUM} and
 * {@code PIER_CHROMEDRIVER} name others). Without them the test is skipped, or fails when
 * {@code PIER_CLIENTS_REQUIRED=1} says they must be there. Nothing is downloaded.
 */
final class Browser implements AutoCloseable {
    static final Path SCREENSHOTS = Path.of("target/console-screenshots").toAbsolutePath();
    private static final List<String> CHROMIUM = List.of("/usr/lib/chromium/chromium", "/usr/bin/chromium",
            "/usr/bin/chromium-browser");
    private static final List<String> CHROMEDRIVER = List.of("/usr/bin/chromedriver",
            "/usr/lib/chromium/chromedriver");

    final ChromeDriver driver;

    private Browser(ChromeDriver driver) {
        this.driver = driver;
    }

    /** Starts a headless Chromium, or skips (fails with PIER_CLIENTS_REQUIRED=1) if there is none. */
    static Browser start() {
        Path chromium = find("PIER_CHROMIUM", CHROMIUM);
        Path chromedriver = find("PIER_CHROMEDRIVER", CHROMEDRIVER);
        String missing = "headless Chromium is missing (looked for " + CHROMIUM + " and " + CHROMEDRIVER
                + "): apt-get install chromium chromium-driver, or set PIER_CHROMIUM and PIER_CHROMEDRIVER";
        if (chromium == null || chromedriver == null) {
            if ("1".equals(System.getenv("PIER_CLIENTS_REQUIRED"))) {
                throw new AssertionError(missing + " (PIER_CLIENTS_REQUIRED=1)");
            }
            Assumptions.abort(missing);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver.toFile()).usingAnyFreePort().build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
        return new Browser(driver);
    }

    private static Path find(String variable, List<String> candidates) {
        String set = System.getenv(variable);
        if (set != null && !set.isBlank()) {
            return Files.isExecutable(Path.of(set)) ? Path.of(set) : null;
        }
        for (String c : candidates) {
            if (Files.isExecutable(Path.of(c))) {
                return Path.of(c);
            }
        }
        return null;
    }

    void open(String url) {
        driver.get(url);
    }

    /** Saves what the window shows as {@code target/console-screenshots/<name>.png}. */
    Path screenshot(String name) throws IOException {
        File shot = driver.getScreenshotAs(OutputType.FILE);
        Files.createDirectories(SCREENSHOTS);
        Path to = SCREENSHOTS.resolve(name + ".png");
        Files.copy(shot.toPath(), to, StandardCopyOption.REPLACE_EXISTING);
        return to;
    }

    /** The browser console's errors (level SEVERE) since the last call. */
    List<String> consoleErrors() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::toString)
                .collect(Collectors.toList());
    }

    /** A cell of a console table, by the table's id, the row's key and the cell's field. */
    WebElement cell(String table, String rowKey, String field) {
        return driver.findElement(By.cssSelector("#" + table + " tr[data-key=\"" + cssString(rowKey)
                + "\"] td[data-field=\"" + field + "\"]"));
    }

    /** {@code s} inside a double-quoted CSS string. */
    static String cssString(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    @Override
    public void close() {
        driver.quit();
    }
}
